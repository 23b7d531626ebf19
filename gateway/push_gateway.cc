#include "gateway/push_gateway.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "gateway/credential_request.h"
#include "gateway/http_body.h"
#include "gateway/push_decision.h"
#include "gateway/receive_pack.h"
#include "gateway/report_status.h"
#include "gateway/upstream.h"
#include "gateway/upstream_symrefs.h"
#include "proxy/http_head_parser.h"

namespace ccsandbox::gateway {
namespace {

constexpr char kAdvertisement[] = "application/x-git-receive-pack-advertisement";
constexpr char kResult[] = "application/x-git-receive-pack-result";

// The client's side of one connection: blocking reads with a timeout, bytes read past the head
// kept for the body.
struct Client {
  int fd;
  absl::Duration timeout;
  std::string pending;  // read, not yet taken

  // More bytes from the socket into `pending`; UNAVAILABLE at EOF, DEADLINE_EXCEEDED when idle.
  absl::Status Read() {
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout)));
    if (ready == 0) return absl::DeadlineExceededError("the client sent nothing in time");
    char buf[64 * 1024];
    const ssize_t got = ready < 0 ? -1 : read(fd, buf, sizeof(buf));
    if (got <= 0) return absl::UnavailableError("the client closed the connection");
    pending.append(buf, got);
    return absl::OkStatus();
  }

  bool Write(absl::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t put = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) return false;
      bytes.remove_prefix(put);
    }
    return true;
  }

  void Respond(int code, absl::string_view phrase, absl::string_view text) {
    const std::string body = absl::StrCat("push gateway: ", text, "\n");
    Write(absl::StrCat("HTTP/1.1 ", code, " ", phrase,
                       "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ",
                       body.size(), "\r\nConnection: close\r\n\r\n", body));
  }

  // The response head of a streamed answer: no length, the connection's end ends it.
  bool StartStream(int code, absl::string_view content_type) {
    return Write(absl::StrCat("HTTP/1.1 ", code, code == 200 ? " OK" : " Upstream",
                              "\r\nContent-Type: ", content_type,
                              "\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"));
  }

  // The next decoded body bytes into `out` (appended); false at the body's end.
  absl::StatusOr<bool> ReadBody(BodyDecoder& body, std::string& out) {
    while (!body.done()) {
      if (pending.empty()) {
        if (absl::Status read = Read(); !read.ok()) return read;
      }
      const size_t before = out.size();
      absl::Status fed = body.Feed(pending, out);
      pending.clear();
      if (!fed.ok()) return fed;
      if (out.size() > before) return true;
    }
    return false;
  }
};

// A client's text in a message or a log line: at most 200 bytes.
std::string Bounded(absl::string_view text) {
  return text.size() <= 200 ? std::string(text) : absl::StrCat(text.substr(0, 200), "…");
}

// Reads the request head: the parsed head, or the status to answer with.
absl::StatusOr<proxy::HttpRequestHead> ReadHead(Client& client) {
  size_t scanned = 0;
  for (;;) {
    const proxy::HeadScan scan = proxy::ScanRequestHead(client.pending, scanned);
    if (scan.state == proxy::HeadScan::State::kTooLarge) {
      return absl::ResourceExhaustedError("the request head is too large");
    }
    if (scan.state == proxy::HeadScan::State::kComplete) {
      absl::StatusOr<proxy::HttpRequestHead> head =
          proxy::ParseRequestHead(absl::string_view(client.pending).substr(0, scan.head_size));
      client.pending.erase(0, scan.head_size);
      return head;
    }
    scanned = client.pending.size();
    if (absl::Status read = client.Read(); !read.ok()) return read;
  }
}

}  // namespace

// The session's read credentials, one per repository, minted when the run's credential helper
// first asks and held (for fetches) until the session's credentials are revoked.
class ReadCredentials {
 public:
  absl::StatusOr<Credential> For(const GatewayRepository& repo, const PushGatewayOptions& options) {
    absl::MutexLock lock(&mu_);
    auto found = by_url_.find(repo.upstream_url);
    if (found != by_url_.end()) return found->second;
    absl::StatusOr<Credential> minted =
        options.credentials->Mint(options.session_id, repo.upstream_url, CredentialScope::kRead);
    if (minted.ok()) by_url_.emplace(repo.upstream_url, *minted);
    return minted;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, Credential> by_url_ ABSL_GUARDED_BY(mu_);
};

// One request's handling, on its connection's thread.
class GatewayRequest {
 public:
  GatewayRequest(const PushGatewayOptions& options, ReadCredentials& reads, Client& client)
      : options_(options), reads_(reads), client_(client) {}

  void Handle() {
    absl::StatusOr<proxy::HttpRequestHead> head = ReadHead(client_);
    if (!head.ok()) {
      if (absl::IsUnavailable(head.status()) || absl::IsDeadlineExceeded(head.status())) return;
      client_.Respond(proxy::HttpStatusForParseError(head.status()), "Bad Request",
                      head.status().message());
      return;
    }
    const std::string target = head->target;
    const size_t q = target.find('?');
    const std::string path = target.substr(0, q);
    const std::string query = q == std::string::npos ? "" : target.substr(q + 1);
    if (path == "/-/credential" && head->method == "POST") {
      AnswerCredential(*head);
      return;
    }
    const GatewayRepository* repo = nullptr;
    std::string rest;
    for (const GatewayRepository& r : options_.repositories) {
      if (absl::StartsWith(path, r.path + "/")) {
        repo = &r;
        rest = path.substr(r.path.size());
      }
    }
    if (repo == nullptr) {
      std::vector<std::string> known;
      for (const GatewayRepository& r : options_.repositories) known.push_back(r.path);
      absl::string_view named = path;
      for (absl::string_view service : {"/info/refs", "/git-receive-pack", "/git-upload-pack"}) {
        if (absl::ConsumeSuffix(&named, service)) break;
      }
      Refuse(
          404, "Not Found",
          absl::StrCat(Bounded(named), " is not a repository of this session; pushes go only to ",
                       known.empty() ? "(none)" : absl::StrJoin(known, ", ")));
      return;
    }
    if (rest == "/info/refs" && head->method == "GET" && query == "service=git-receive-pack") {
      Advertise(*repo);
    } else if (rest == "/git-receive-pack" && head->method == "POST") {
      ReceivePack(*repo, *head);
    } else if (absl::StrContains(target, "git-upload-pack")) {
      Refuse(403, "Forbidden",
             "fetches go to the upstream directly with the run's read credential, not through "
             "the push gateway");
    } else {
      Refuse(404, "Not Found",
             absl::StrCat(Bounded(head->method), " ", Bounded(path), " is not served here"));
    }
  }

 private:
  void Refuse(int code, absl::string_view phrase, const std::string& why) {
    Say(absl::StrCat("refused ", code, ": ", why));
    client_.Respond(code, phrase, why);
  }

  // The pin for `url`'s host when the broker resolves names from its hosts file.
  std::vector<std::string> Pins(const std::string& url) const {
    if (!options_.upstream_address) return {};
    absl::string_view rest = url;
    const bool https = absl::ConsumePrefix(&rest, "https://");
    if (!https) absl::ConsumePrefix(&rest, "http://");
    const absl::string_view authority = rest.substr(0, rest.find('/'));
    const size_t colon = authority.rfind(':');
    const std::string host(colon == absl::string_view::npos ? authority
                                                            : authority.substr(0, colon));
    const std::string port(colon == absl::string_view::npos ? (https ? "443" : "80")
                                                            : authority.substr(colon + 1));
    const std::string address = options_.upstream_address(host);
    if (address.empty()) return {};
    return {absl::StrCat(host, ":", port, ":", address)};
  }

  void Say(const std::string& line) {
    if (options_.on_decision) options_.on_decision(line);
  }

  // A write credential for `repo`, revoked when the result goes.
  absl::StatusOr<std::unique_ptr<Credential, std::function<void(Credential*)>>> WriteCredential(
      const GatewayRepository& repo) {
    absl::StatusOr<Credential> minted =
        options_.credentials->Mint(options_.session_id, repo.upstream_url, CredentialScope::kWrite);
    if (!minted.ok()) return minted.status();
    CredentialBroker* broker = options_.credentials;
    const std::string session = options_.session_id;
    return std::unique_ptr<Credential, std::function<void(Credential*)>>(
        new Credential(*std::move(minted)), [broker, session](Credential* c) {
          broker->Revoke(session, *c);
          delete c;
        });
  }

  // Streams the upstream's answer to the client; a refused credential becomes a 502.
  // `held`: a write credential the caller minted (else one is minted here).
  void Relay(const GatewayRepository& repo, UpstreamRequest request,
             const Credential* held = nullptr) {
    absl::StatusOr<std::unique_ptr<Credential, std::function<void(Credential*)>>> credential =
        held == nullptr ? WriteCredential(repo) : nullptr;
    if (!credential.ok()) {
      Refuse(503, "Service Unavailable",
             absl::StrCat("no write credential: ", credential.status().message()));
      return;
    }
    const Credential& use = held != nullptr ? *held : **credential;
    request.resolve = Pins(repo.upstream_url);
    request.username = use.username;
    request.password = use.password;
    bool streaming = false;
    int status = 0;
    UpstreamSink sink;
    sink.on_head = [&](int code, const std::string& content_type) {
      status = code;
      if (code == 200) streaming = client_.StartStream(200, content_type);
    };
    sink.on_data = [&](absl::string_view bytes) { return !streaming || client_.Write(bytes); };
    const absl::Status done = Exchange(request, sink);
    if (streaming) return;  // the answer went out as it came; its end ends the connection
    if (!done.ok()) {
      Refuse(502, "Bad Gateway", std::string(done.message()));
    } else {
      Refuse(502, "Bad Gateway",
             absl::StrCat("the upstream answered ", status,
                          status == 401 || status == 403 ? " to the gateway's credential" : ""));
    }
  }

  void Advertise(const GatewayRepository& repo) {
    UpstreamRequest request;
    request.url = repo.upstream_url + "/info/refs?service=git-receive-pack";
    request.headers = {absl::StrCat("Accept: ", kAdvertisement),
                       "User-Agent: ccsandbox-push-gateway"};
    Relay(repo, std::move(request));
  }

  void ReceivePack(const GatewayRepository& repo, const proxy::HttpRequestHead& head) {
    std::optional<BodyDecoder> body;
    const proxy::HttpHeader* te = head.Find("Transfer-Encoding");
    const proxy::HttpHeader* length = head.Find("Content-Length");
    const proxy::HttpHeader* encoding = head.Find("Content-Encoding");
    uint64_t n = 0;
    if (encoding != nullptr && !absl::EqualsIgnoreCase(encoding->value, "identity")) {
      Refuse(415, "Unsupported Media Type", "a compressed push request is not accepted");
      return;
    }
    if (te != nullptr) {
      body = BodyDecoder::Chunked();  // the head parser allows only "…, chunked"
    } else if (length != nullptr && absl::SimpleAtoi(length->value, &n)) {
      body = BodyDecoder::Length(n);
    } else {
      Refuse(411, "Length Required", "a push request needs a length or chunked encoding");
      return;
    }
    if (const proxy::HttpHeader* expect = head.Find("Expect");
        expect != nullptr && absl::EqualsIgnoreCase(expect->value, "100-continue")) {
      client_.Write("HTTP/1.1 100 Continue\r\n\r\n");
    }
    // The ref updates first: nothing is forwarded before every ref has been decided.
    ReceivePackHeadParser parser;
    std::string decoded;
    while (!parser.done()) {
      std::string more;
      absl::StatusOr<bool> got = client_.ReadBody(*body, more);
      absl::Status fed = got.ok() ? parser.Feed(more) : got.status();
      if (fed.ok() && got.ok() && !*got && !parser.done()) {
        fed = absl::InvalidArgumentError("receive-pack: the request ended inside its commands");
      }
      if (!fed.ok()) {
        Refuse(400, "Bad Request", std::string(fed.message()));
        return;
      }
      decoded += more;
    }
    if (parser.head().updates.empty()) {
      // git's probe before a large push (a lone flush): answered as receive-pack does, with
      // nothing; no upstream is asked.
      Say(absl::StrCat("probe of ", repo.path, " answered"));
      client_.StartStream(200, kResult);
      return;
    }
    // The upstream's symbolic refs first: a push to an alias updates what it points at.
    absl::StatusOr<std::unique_ptr<Credential, std::function<void(Credential*)>>> credential =
        WriteCredential(repo);
    if (!credential.ok()) {
      Refuse(503, "Service Unavailable",
             absl::StrCat("no write credential: ", credential.status().message()));
      return;
    }
    absl::StatusOr<Symrefs> symrefs =
        UpstreamSymrefs(repo.upstream_url, **credential, Pins(repo.upstream_url));
    const bool approver = options_.approver_connected && options_.approver_connected();
    PushDecision decision =
        DecidePush(parser.head().updates, options_.rules, approver, symrefs.value_or(Symrefs()));
    if (!symrefs.ok()) {
      decision.allowed = false;
      decision.summary = absl::StrCat("the upstream's symbolic refs could not be read: ",
                                      symrefs.status().message());
      for (RefStatus& status : decision.statuses) {
        status.error = absl::StrCat(kPolicyPrefix,
                                    ": not pushed, the upstream's symbolic refs "
                                    "could not be read (",
                                    Bounded(symrefs.status().message()),
                                    "), so what this push would update is unknown");
      }
    }
    Say(absl::StrCat("push to ", repo.path, ": ", decision.allowed ? "allowed" : "refused", " (",
                     decision.summary, ")"));
    if (!decision.allowed) {
      // The rest is read and dropped, so git reads the answer rather than a broken pipe.
      for (;;) {
        std::string dropped;
        absl::StatusOr<bool> got = client_.ReadBody(*body, dropped);
        if (!got.ok() || !*got) break;
      }
      client_.StartStream(200, kResult);
      client_.Write(RenderReportStatus("", decision.statuses, BandFor(parser.head())));
      return;
    }
    UpstreamRequest request;
    request.method = "POST";
    request.url = repo.upstream_url + "/git-receive-pack";
    request.headers = {"Content-Type: application/x-git-receive-pack-request",
                       absl::StrCat("Accept: ", kResult), "User-Agent: ccsandbox-push-gateway"};
    size_t offset = 0;
    request.body = [&](char* buf, size_t max) -> absl::StatusOr<size_t> {
      while (offset == decoded.size()) {
        decoded.clear();
        offset = 0;
        absl::StatusOr<bool> got = client_.ReadBody(*body, decoded);
        if (!got.ok()) return got.status();
        if (!*got) return 0;
      }
      const size_t n = std::min(max, decoded.size() - offset);
      memcpy(buf, decoded.data() + offset, n);
      offset += n;
      return n;
    };
    Relay(repo, std::move(request), credential->get());
  }

  // The run's credential helper asks for a read credential (git's credential protocol).
  void AnswerCredential(const proxy::HttpRequestHead& head) {
    const proxy::HttpHeader* length = head.Find("Content-Length");
    uint64_t n = 0;
    if (length == nullptr || !absl::SimpleAtoi(length->value, &n) || n > 64 * 1024) {
      Refuse(400, "Bad Request", "a credential request needs a length of at most 64 KiB");
      return;
    }
    BodyDecoder body = BodyDecoder::Length(n);
    std::string request;
    for (;;) {
      absl::StatusOr<bool> got = client_.ReadBody(body, request);
      if (!got.ok()) return;
      if (!*got) break;
    }
    std::string answer;
    if (!options_.credentials->ReadOnlyEnforced()) {
      // The only credential can push (a personal token): in the run, it would push around the
      // rule. Fetches of private repositories go without.
      Say("credential asked: none given, the only credential can push");
    } else if (const GatewayRepository* repo = Asked(request)) {
      absl::StatusOr<Credential> read = reads_.For(*repo, options_);
      if (read.ok()) {
        answer = absl::StrCat("username=", read->username, "\npassword=", read->password, "\n");
        Say(absl::StrCat("read credential handed out for ", repo->path));
      } else {
        Say(absl::StrCat("no read credential for ", repo->path, ": ", read.status().message()));
      }
    } else {
      Say("credential asked for a repository that is not the session's: none given");
    }
    client_.Write(absl::StrCat("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ",
                               answer.size(), "\r\nConnection: close\r\n\r\n", answer));
  }

  // The session's repository git's credential request names, or null.
  const GatewayRepository* Asked(absl::string_view request) const {
    std::vector<std::string> urls;
    for (const GatewayRepository& repo : options_.repositories) urls.push_back(repo.upstream_url);
    const std::optional<size_t> i = RepositoryAsked(ParseCredentialRequest(request), urls);
    return i.has_value() ? &options_.repositories[*i] : nullptr;
  }

  const PushGatewayOptions& options_;
  ReadCredentials& reads_;
  Client& client_;
};

PushGateway::PushGateway(UniqueFd listener, PushGatewayOptions options)
    : options_(std::move(options)),
      listener_(std::move(listener)),
      reads_(std::make_unique<ReadCredentials>()) {}

absl::StatusOr<std::unique_ptr<PushGateway>> PushGateway::Start(UniqueFd listener,
                                                                PushGatewayOptions options) {
  if (!listener.valid() || listen(listener.get(), 64) != 0) {
    return absl::InvalidArgumentError("push gateway: no socket to listen on");
  }
  if (options.credentials == nullptr) {
    return absl::InvalidArgumentError("push gateway: no credential broker");
  }
  auto gateway =
      std::unique_ptr<PushGateway>(new PushGateway(std::move(listener), std::move(options)));
  gateway->acceptor_ = std::thread([g = gateway.get()] { g->Accept(); });
  return gateway;
}

PushGateway::~PushGateway() {
  stopping_ = true;
  shutdown(listener_.get(), SHUT_RDWR);  // wakes accept()
  acceptor_.join();
  std::list<Connection> all;
  {
    absl::MutexLock lock(&mu_);
    for (Connection& c : connections_) shutdown(c.fd.get(), SHUT_RDWR);  // wakes the reads
    all.swap(connections_);
  }
  for (Connection& c : all) c.thread.join();
}

void PushGateway::Accept() {
  while (!stopping_) {
    const int fd = accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // shut down (or the socket is unusable)
    }
    absl::MutexLock lock(&mu_);
    // Finished connections are joined here, so their number stays bounded.
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (it->done) {
        it->thread.join();
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
    if (static_cast<int>(connections_.size()) >= options_.max_connections) {
      Client client{fd, absl::Seconds(1), ""};
      client.Respond(503, "Service Unavailable", "too many connections to the push gateway");
      close(fd);
      continue;
    }
    Connection& c = connections_.emplace_back();
    c.fd.Reset(fd);
    c.thread = std::thread([this, fd, &c] {
      Serve(fd);
      absl::MutexLock done_lock(&mu_);
      c.done = true;
    });
  }
}

void PushGateway::Serve(int fd) {
  Client client{fd, options_.io_timeout, ""};
  GatewayRequest(options_, *reads_, client).Handle();
  shutdown(fd, SHUT_WR);
}

}  // namespace ccsandbox::gateway
