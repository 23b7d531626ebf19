#include "gateway/upstream.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ccsandbox::gateway {
namespace {

struct Exchanging {
  const UpstreamRequest* request;
  const UpstreamSink* sink;
  long status = 0;
  std::string content_type;
  bool head_sent = false;
  absl::Status body_error;
  bool aborted_by_sink = false;
};

void SendHead(Exchanging& x, CURL* curl) {
  if (x.head_sent) return;
  x.head_sent = true;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &x.status);
  if (x.sink->on_head) x.sink->on_head(static_cast<int>(x.status), x.content_type);
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* x = static_cast<Exchanging*>(user);
  const absl::string_view line(data, size * count);
  if (absl::StartsWithIgnoreCase(line, "content-type:")) {
    x->content_type = std::string(absl::StripAsciiWhitespace(line.substr(13)));
  }
  return size * count;
}

size_t OnData(char* data, size_t size, size_t count, void* user) {
  auto* pair = static_cast<std::pair<Exchanging*, CURL*>*>(user);
  SendHead(*pair->first, pair->second);
  if (!pair->first->sink->on_data(absl::string_view(data, size * count))) {
    pair->first->aborted_by_sink = true;
    return 0;  // libcurl ends the exchange
  }
  return size * count;
}

size_t OnRead(char* buffer, size_t size, size_t count, void* user) {
  auto* x = static_cast<Exchanging*>(user);
  absl::StatusOr<size_t> got = x->request->body(buffer, size * count);
  if (!got.ok()) {
    x->body_error = got.status();
    return CURL_READFUNC_ABORT;
  }
  return *got;
}

std::string HostOf(absl::string_view url) {
  const size_t scheme = url.find("://");
  absl::string_view rest = scheme == absl::string_view::npos ? url : url.substr(scheme + 3);
  rest = rest.substr(0, rest.find('/'));
  rest = rest.substr(rest.find('@') == absl::string_view::npos ? 0 : rest.find('@') + 1);
  return std::string(rest);
}

}  // namespace

absl::Status Exchange(const UpstreamRequest& request, const UpstreamSink& sink) {
  static std::once_flag global;
  std::call_once(global, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (curl == nullptr) return absl::InternalError("upstream: libcurl could not start");
  Exchanging x{&request, &sink};
  std::pair<Exchanging*, CURL*> data_user{&x, curl.get()};
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_NOPROXY, "*");  // the broker's own environment picks no proxy
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(request.connect_timeout)));
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME,
                   static_cast<long>(absl::ToInt64Seconds(request.stall_limit)));
  if (!request.username.empty() || !request.password.empty()) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERNAME, request.username.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, request.password.c_str());
  }
  curl_slist* pins = nullptr;
  for (const std::string& pin : request.resolve) pins = curl_slist_append(pins, pin.c_str());
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> pin_list(pins, curl_slist_free_all);
  if (pins != nullptr) curl_easy_setopt(c, CURLOPT_RESOLVE, pin_list.get());
  curl_slist* headers = nullptr;
  for (const std::string& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  // libcurl would otherwise add "Expect: 100-continue" to a large POST.
  headers = curl_slist_append(headers, "Expect:");
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_list(headers, curl_slist_free_all);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, header_list.get());
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &x);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnData);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &data_user);
  if (request.method == "POST") {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, OnRead);
    curl_easy_setopt(c, CURLOPT_READDATA, &x);
    // Length unknown until the end: chunked.
    header_list.reset(curl_slist_append(header_list.release(), "Transfer-Encoding: chunked"));
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, header_list.get());
  } else if (request.method != "GET") {
    return absl::InvalidArgumentError(absl::StrCat("upstream: method ", request.method));
  }
  const CURLcode done = curl_easy_perform(c);
  if (done == CURLE_OK) {
    SendHead(x, c);  // a response without a body
    return absl::OkStatus();
  }
  if (!x.body_error.ok()) return x.body_error;
  if (x.aborted_by_sink) return absl::CancelledError("upstream: the receiver went away");
  return absl::UnavailableError(
      absl::StrCat("upstream ", HostOf(request.url), ": ", curl_easy_strerror(done)));
}

}  // namespace ccsandbox::gateway
