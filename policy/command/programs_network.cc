// Network tools (curl, wget, ssh, scp …) and cloud, cluster and hosting CLIs.
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "policy/command/program_util.h"

namespace ccsandbox::policy::programs {
namespace {

// ---------------------------------------------------------------------------------------------
// Network tools.

// True when `url` names this host: localhost, 127.0.0.0/8, [::1], 0.0.0.0.
bool IsLoopbackUrl(absl::string_view url) {
  absl::string_view u = url;
  size_t scheme = u.find("://");
  if (scheme != absl::string_view::npos) u.remove_prefix(scheme + 3);
  size_t end = u.find_first_of("/?#");
  absl::string_view authority = u.substr(0, end);
  size_t at = authority.rfind('@');
  if (at != absl::string_view::npos) authority.remove_prefix(at + 1);
  absl::string_view host = authority;
  if (absl::StartsWith(host, "[")) {
    host = host.substr(1, host.find(']') - 1);
    return host == "::1";
  }
  host = host.substr(0, host.find(':'));
  std::string h = absl::AsciiStrToLower(host);
  if (h == "localhost" || absl::EndsWith(h, ".localhost") || h == "0.0.0.0") return true;
  if (!absl::StartsWith(h, "127.")) return false;
  int dots = 0;
  for (char ch : h) {
    if (ch == '.') {
      ++dots;
    } else if (!absl::ascii_isdigit(ch)) {
      return false;
    }
  }
  return dots == 3;
}

// Sending data: to this host it changes local state, anywhere else remote state.
void SendData(const Call& c, const std::vector<const ShellWord*>& urls, absl::string_view how) {
  bool loopback = !urls.empty();
  for (const ShellWord* u : urls) loopback = loopback && u->literal() && IsLoopbackUrl(u->text);
  if (loopback) {
    c.Add(R::kMutating, absl::StrCat(how, " to a server on this host"));
  } else {
    c.Add(R::kNetworkWrite, absl::StrCat(how, " to a remote host"));
  }
}

void Curl(const Call& c) {
  ArgScan s = ScanArgs(
      c.argv, 1,
      {"dFTXouHAebcDKxUErmwyYzCPtQ",
       "data data-ascii data-binary data-raw data-urlencode json form form-string upload-file "
       "request output user header user-agent referer cookie cookie-jar dump-header config "
       "proxy proxy-user cert key cacert capath range max-time connect-timeout write-out retry "
       "retry-delay retry-max-time resolve connect-to interface url output-dir limit-rate "
       "max-filesize oauth2-bearer variable trace trace-ascii stderr unix-socket "
       "abstract-unix-socket netrc-file cert-type key-type pass ciphers time-cond local-port "
       "keepalive-time dns-servers doh-url preproxy noproxy aws-sigv4 hostpubmd5 mail-from "
       "mail-rcpt proto proto-redir socks5 socks5-hostname request-target quote "
       "speed-limit speed-time expect100-timeout happy-eyeballs-timeout-ms max-redirs "
       "tls-max ftp-port ftp-method krb delegation login-options sasl-authzid"},
      false);
  std::vector<const ShellWord*> urls = Operands(c.argv, s);
  std::vector<ShellWord> url_opts;
  url_opts.reserve(s.opts.size());
  for (const Opt& o : s.opts) {
    if (o.name == "--url" && o.has_value) {
      urls.push_back(o.value_word ? o.value_word : nullptr);
      if (urls.back() == nullptr) {
        url_opts.push_back(ShellWord{o.value, o.value, 0});
        urls.back() = &url_opts.back();
      }
    }
  }
  if (urls.empty() && s.HasAny({"-V", "--version", "-h", "--help", "-M", "--manual"})) {
    return c.Add(R::kReadOnly, "prints its version or help");
  }
  if (s.HasAny({"-K", "--config"})) {
    c.Add(R::kOpaqueProgram, "reads further options from a file");
  }
  bool sends = s.HasAny({"-d", "--data", "--data-ascii", "--data-binary", "--data-raw",
                         "--data-urlencode", "--json", "-F", "--form", "--form-string", "-T",
                         "--upload-file", "--mail-rcpt", "-Q", "--quote"});
  for (const Opt& o : s.opts) {
    if ((o.name == "-X" || o.name == "--request") && o.has_value &&
        !OneOf(absl::AsciiStrToUpper(o.value), {"GET", "HEAD", "OPTIONS"})) {
      sends = true;
    }
  }
  if (sends) SendData(c, urls, "sends data");
  for (const Opt& o : s.opts) {
    if (OneOf(o.name, {"-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace",
                       "--trace-ascii", "--stderr"}) &&
        o.has_value) {
      ShellWord w = OptWord(o);
      if (w.text != "-") c.AddWrite(w, "writes");
    }
    if (OneOf(o.name, {"-O", "--remote-name", "--remote-name-all", "--output-dir", "--create-dirs",
                       "-J", "--remote-header-name"})) {
      c.Add(R::kMutating, "saves the download to a file");
    }
  }
  c.Add(R::kNetworkAccess, "reaches the network");
}

void Wget(const Call& c) {
  ArgScan s = ScanArgs(
      c.argv, 1,
      {"OoaPUeitTwQlARDIXhB",
       "output-document output-file append-output directory-prefix user-agent execute "
       "input-file tries timeout wait quota level accept reject domains post-data post-file "
       "method body-data body-file header user password http-user http-password "
       "load-cookies save-cookies ca-certificate certificate private-key limit-rate "
       "base bind-address"},
      false);
  std::vector<const ShellWord*> urls = Operands(c.argv, s);
  if (urls.empty() && s.HasAny({"-V", "--version", "-h", "--help"})) {
    return c.Add(R::kReadOnly, "prints its version or help");
  }
  bool sends = s.HasAny({"--post-data", "--post-file", "--body-data", "--body-file"});
  for (const Opt& o : s.opts) {
    if (o.name == "--method" && !OneOf(absl::AsciiStrToUpper(o.value), {"GET", "HEAD"})) {
      sends = true;
    }
  }
  if (sends) SendData(c, urls, "sends data");
  bool to_stdout = s.HasAny({"--spider"});
  for (const Opt& o : s.opts) {
    if ((o.name == "-O" || o.name == "--output-document") && o.has_value) {
      ShellWord w = OptWord(o);
      if (w.text == "-") {
        to_stdout = true;
      } else {
        to_stdout = to_stdout || ClassifyWriteTarget(w) == WriteTarget::kDiscard;
        c.AddWrite(w, "writes");
      }
    }
    if (OneOf(o.name, {"-o", "--output-file", "-a", "--append-output", "--save-cookies"}) &&
        o.has_value) {
      ShellWord w = OptWord(o);
      c.AddWrite(w, "writes");
    }
  }
  if (!to_stdout) c.Add(R::kMutating, "saves the download to a file");
  c.Add(R::kNetworkAccess, "reaches the network");
}

void Httpie(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1,
                       {"aAo",
                        "auth auth-type output session session-read-only "
                        "verify cert cert-key timeout"},
                       false);
  std::vector<const ShellWord*> ops = Operands(c.argv, s);
  if (ops.empty()) return c.Add(R::kReadOnly, "prints its usage");
  size_t url = 0;
  bool sends = false;
  if (ops.size() > 1 && absl::AsciiStrToUpper(ops[0]->text) == ops[0]->text &&
      ops[0]->text.find_first_of(":/.") == std::string::npos) {
    sends = !OneOf(ops[0]->text, {"GET", "HEAD", "OPTIONS"});
    url = 1;
  }
  for (size_t i = url + 1; i < ops.size(); ++i) {
    if (ops[i]->text.find_first_of("=@") != std::string::npos) sends = true;
  }
  if (s.HasAny({"-f", "--form", "--raw"})) sends = true;
  if (sends) SendData(c, {ops[url]}, "sends data");
  if (s.HasAny({"-d", "--download", "-o", "--output"})) {
    c.Add(R::kMutating, "saves the download to a file");
  }
  c.Add(R::kNetworkAccess, "reaches the network");
}

// ssh/scp/sftp `-o Key=value` options whose value is a command run on this machine.
void SshCommandOptions(const Call& c, const ArgScan& s) {
  for (const Opt& o : s.opts) {
    if (o.name != "-o" || !o.has_value) continue;
    ShellWord word = OptWord(o);
    absl::string_view option = word.text;
    const size_t sep = option.find_first_of("= ");
    const std::string key = absl::AsciiStrToLower(option.substr(0, sep));
    if (sep == absl::string_view::npos ||
        !OneOf(key, {"proxycommand", "localcommand", "knownhostscommand"})) {
      continue;
    }
    word.text = std::string(absl::StripLeadingAsciiWhitespace(option.substr(sep + 1)));
    c.Code(word, absl::StrCat(c.name, " -o ", key));
  }
  if (s.HasAny({"-F"})) c.Add(R::kOpaqueProgram, "-F reads options (and commands) from a file");
}

// host:path or scheme://: an operand on another machine.
bool IsRemoteOperand(const ShellWord& w) {
  const std::string& t = w.text;
  if (absl::StrContains(t, "://")) return true;
  const size_t colon = t.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  const size_t slash = t.find('/');
  return slash == std::string::npos || colon < slash;
}

void RemoteCopy(const Call& c) {
  ArgScan s = ScanArgs(c.argv, 1,
                       {"PiocFSlJDeBT",
                        "rsh rsync-path password-file port "
                        "exclude include filter files-from "
                        "log-file chmod chown"},
                       false);
  SshCommandOptions(c, s);
  for (const Opt& o : s.opts) {
    // rsync -e/--rsh and scp/sftp -S name the remote shell program, run on this machine.
    if (((o.name == "-e" || o.name == "--rsh") && c.name == "rsync") ||
        (o.name == "-S" && c.name != "rsync")) {
      if (o.has_value) c.Code(OptWord(o), absl::StrCat(c.name, " ", o.name));
    }
  }
  std::vector<const ShellWord*> ops = Operands(c.argv, s);
  if (ops.empty()) {
    if (c.name == "sftp") {
      return c.Add(R::kNetworkWrite, "opens an interactive transfer session");
    }
    return c.Add(R::kReadOnly, "prints its usage");
  }
  if (c.name == "sftp") return c.Add(R::kNetworkWrite, "transfers files to or from a host");
  bool any_remote = false;
  for (const ShellWord* w : ops) any_remote = any_remote || IsRemoteOperand(*w);
  const ShellWord& dst = *ops.back();
  if (IsRemoteOperand(dst)) {
    c.Add(R::kNetworkWrite, absl::StrCat("copies files to ", Quote(dst.text)));
    return;
  }
  if (any_remote) c.Add(R::kNetworkAccess, "copies files from another host");
  if (ops.size() >= 2 || c.name == "scp") c.AddWrite(dst, "copies files to");
}

void Ssh(const Call& c) {
  if (c.argv.size() == 2 && OneOf(c.argv[1].text, {"-V", "-G"})) {
    return c.Add(R::kReadOnly, "prints its version or configuration");
  }
  SshCommandOptions(c, ScanArgs(c.argv, 1, {"BbcDEeFIiJLlmOoPpQRSWw", ""}, true));
  c.Add(R::kNetworkWrite, "runs commands on another host");
}

void NetcatLike(const Call& c) {
  if (AnyWordStartsWith(c.argv, 1, "-z") || IsVersionFlag(c)) {
    return c.Add(R::kNetworkAccess, "only probes ports");
  }
  c.Add(R::kNetworkWrite, "sends arbitrary data over the network");
}

void Openssl(const Call& c) {
  const std::string sub = SubWord(c, nullptr);
  if (OneOf(sub, {"s_client", "s_server", "s_time", "ocsp"})) {
    return c.Add(R::kNetworkWrite, absl::StrCat(sub, " opens a network connection"));
  }
  if (AnyWord(c.argv, 2, {"-out", "-keyout"})) return c.Add(R::kMutating, "writes a file");
  c.Add(R::kReadOnly, absl::StrCat(sub, " only reads"));
}

// Cloud, cluster and hosting CLIs: a read verb only reads; anything else may change remote
// state (fail closed for verbs this table does not know).
void RemoteStateCli(const Call& c) {
  std::vector<absl::string_view> words;
  for (size_t i = 1; i < c.argv.size() && words.size() < 3; ++i) {
    const ShellWord& w = c.argv[i];
    if (!w.literal()) {
      c.Add(R::kDynamicCode, "runs a subcommand only known at run time");
      return;
    }
    if (absl::StartsWith(w.text, "-")) continue;
    words.push_back(w.text);
  }
  if (words.empty()) {
    // `vercel --prod` and `netlify deploy`-style defaults: a bare invocation may deploy.
    if (c.argv.size() == 1 || IsVersionFlag(c)) {
      return c.Add(R::kReadOnly, "prints its usage or version");
    }
    return c.Add(R::kChangeRemoteState, "without a subcommand may deploy or change remote state");
  }
  auto verb_is = [](absl::string_view w, absl::string_view list) {
    for (absl::string_view v : absl::StrSplit(list, ' ', absl::SkipEmpty())) {
      if (w == v || (absl::StartsWith(w, v) && w.size() > v.size() && w[v.size()] == '-')) {
        return true;
      }
    }
    return false;
  };
  constexpr absl::string_view kWrites =
      "apply create delete destroy deploy put update patch set rm remove cp mv sync run exec "
      "scale rollout install uninstall upgrade push publish terminate start stop restart "
      "reboot import replace edit label annotate taint untaint drain cordon uncordon attach "
      "invoke mb rb login logout init rollback promote release submit send post add enable "
      "disable expose autoscale tag untag modify reset revoke grant assign attach detach "
      "associate disassociate copy rename restore cancel resume suspend purge set-iam-policy "
      "add-iam-policy-binding ssh scp port-forward proxy cp certificate debug";
  constexpr absl::string_view kReads =
      "get describe list ls show view status logs log top version plan output validate "
      "whoami explain api-resources api-versions cluster-info info search history inspect "
      "tail help template lint diff providers graph read print wait config-view query "
      "head lookup check test-iam-permissions";
  bool write = false;
  bool read = false;
  for (absl::string_view w : words) {
    if (verb_is(w, kWrites)) write = true;
    if (verb_is(w, kReads)) read = true;
  }
  const std::string what = absl::StrJoin(words, " ");
  if (!write && read) {
    return c.Add(R::kNetworkAccess, absl::StrCat(what, " only reads remote state"));
  }
  c.Add(R::kChangeRemoteState, absl::StrCat(what, " may change remote infrastructure"));
}

}  // namespace

std::vector<ProgramGroup> NetworkPrograms() {
  return {
      // Network.
      {"curl", H(Curl)},
      {"wget wget2", H(Wget)},
      {"http https xh xhs", H(Httpie)},
      {"aria2c axel", H([](const Call& c) {
         c.Add(R::kMutating, "saves downloads to files");
         c.Add(R::kNetworkAccess, "reaches the network");
       })},
      {"scp rsync sftp", H(RemoteCopy)},
      {"ssh mosh autossh", H(Ssh)},
      {"nc ncat netcat socat telnet", H(NetcatLike)},
      {"ftp lftp tftp", S(R::kNetworkWrite, "transfers files to or from a host")},
      {"ping ping6 dig nslookup host traceroute traceroute6 tracepath mtr whois ssh-keyscan "
       "drill",
       S(R::kNetworkAccess, "queries the network")},
      {"openssl", H(Openssl)},
      {"aws gcloud gsutil bq az kubectl oc helm terraform tofu terragrunt pulumi heroku fly "
       "flyctl vercel netlify firebase wrangler doctl eksctl glab hub linode-cli ibmcloud "
       "aliyun s3cmd rclone ansible ansible-playbook gcloud.cmd",
       H(RemoteStateCli)},
  };
}

}  // namespace ccsandbox::policy::programs
