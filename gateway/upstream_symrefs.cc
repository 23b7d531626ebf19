#include "gateway/upstream_symrefs.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gateway/pkt_line.h"
#include "gateway/receive_pack.h"
#include "gateway/upstream.h"

namespace ccsandbox::gateway {

std::string LsRefsRequest() {
  return PktLine::Data("command=ls-refs\n").Encode() + "0001" +
         PktLine::Data("symrefs\n").Encode() + PktLine::Data("ref-prefix refs/\n").Encode() +
         PktLine::Flush().Encode();
}

absl::StatusOr<Symrefs> ParseLsRefs(absl::string_view response) {
  PktLineReader reader;
  reader.Feed(response);
  Symrefs symrefs;
  for (;;) {
    absl::StatusOr<std::optional<PktLine>> line = reader.Next();
    if (!line.ok()) return line.status();
    if (!line->has_value()) {
      return absl::InvalidArgumentError("ls-refs: the answer ended before its flush");
    }
    if ((*line)->kind == PktLine::Kind::kFlush) break;
    if ((*line)->kind != PktLine::Kind::kData) {
      return absl::InvalidArgumentError("ls-refs: not a protocol v2 answer");
    }
    // "<oid> <refname>[ symref-target:<target>][ peeled:<oid>]"
    std::vector<absl::string_view> f =
        absl::StrSplit(absl::StripSuffix((*line)->data, "\n"), ' ', absl::SkipEmpty());
    if (f.size() < 2 || f[0].size() < 40 || absl::StartsWith(f[0], "#")) {
      return absl::InvalidArgumentError("ls-refs: not a protocol v2 answer");
    }
    for (size_t i = 2; i < f.size(); ++i) {
      absl::string_view target = f[i];
      if (absl::ConsumePrefix(&target, "symref-target:")) {
        symrefs[std::string(f[1])] = std::string(target);
      }
    }
  }
  return symrefs;
}

absl::StatusOr<Symrefs> UpstreamSymrefs(const std::string& upstream_url,
                                        const Credential& credential,
                                        const std::vector<std::string>& resolve) {
  const std::string body = LsRefsRequest();
  size_t sent = 0;
  UpstreamRequest request;
  request.method = "POST";
  request.url = upstream_url + "/git-upload-pack";
  request.headers = {"Content-Type: application/x-git-upload-pack-request",
                     "Accept: application/x-git-upload-pack-result", "Git-Protocol: version=2",
                     "User-Agent: ccsandbox-push-gateway"};
  request.resolve = resolve;
  request.username = credential.username;
  request.password = credential.password;
  request.body = [&](char* buf, size_t max) -> absl::StatusOr<size_t> {
    const size_t n = std::min(max, body.size() - sent);
    memcpy(buf, body.data() + sent, n);
    sent += n;
    return n;
  };
  int status = 0;
  std::string answer;
  UpstreamSink sink;
  sink.on_head = [&](int code, const std::string&) { status = code; };
  sink.on_data = [&](absl::string_view bytes) {
    answer.append(bytes.data(), bytes.size());
    return answer.size() <= kMaxHeadBytes;  // refs of one repository, not a pack
  };
  if (absl::Status done = Exchange(request, sink); !done.ok()) return done;
  if (status != 200) {
    return absl::UnavailableError(absl::StrCat("the upstream answered ", status));
  }
  return ParseLsRefs(answer);
}

}  // namespace ccsandbox::gateway
