#include "broker/microvm/probe_result.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ccsandbox::broker::microvm {
namespace {

constexpr size_t kMaxQuoted = 160;

v1::ProbeResult Missing(absl::string_view part, std::string note, std::string hint = "") {
  v1::ProbeResult result;
  result.set_backend(v1::SANDBOX_BACKEND_MICROVM);
  result.set_note(std::move(note));
  result.add_missing(std::string(part));
  result.set_requires_install(!hint.empty());
  result.set_install_hint(std::move(hint));
  return result;
}

std::string Seconds(absl::Duration d) { return absl::StrFormat("%.1fs", absl::ToDoubleSeconds(d)); }

std::string DescribeBoot(const BootAttempt& boot) {
  if (boot.reached_marker) return absl::StrCat(boot.accel, ": booted in ", Seconds(boot.took));
  std::string text = absl::StrCat(boot.accel, ": ", boot.failure);
  if (!boot.output_line.empty()) absl::StrAppend(&text, " ('", boot.output_line, "')");
  return text;
}

std::string Parts(const MicrovmFacts& facts) {
  return absl::StrCat("hypervisor ", facts.hypervisor, ", kernel ", facts.kernel, ", image ",
                      facts.initrd);
}

}  // namespace

std::string QuotableLine(absl::string_view output) {
  std::string first_error;
  std::string last;
  for (absl::string_view raw : absl::StrSplit(output, '\n')) {
    std::string line;
    for (char c : raw) {
      if (absl::ascii_isprint(static_cast<unsigned char>(c))) line.push_back(c);
    }
    line = std::string(absl::StripAsciiWhitespace(line));
    if (line.empty()) continue;
    if (line.size() > kMaxQuoted) line = line.substr(0, kMaxQuoted) + "...";
    const std::string lower = absl::AsciiStrToLower(line);
    if (first_error.empty() &&
        (absl::StrContains(lower, "error") || absl::StrContains(lower, "panic") ||
         absl::StrContains(lower, "fatal") || absl::StrContains(lower, "failed"))) {
      first_error = line;
    }
    last = std::move(line);
  }
  return first_error.empty() ? last : first_error;
}

v1::ProbeResult EvaluateMicrovm(const MicrovmFacts& facts) {
  std::vector<std::string> unset;
  if (facts.hypervisor.empty()) unset.push_back("--microvm-hypervisor");
  if (facts.kernel.empty()) unset.push_back("--microvm-kernel");
  if (facts.initrd.empty()) unset.push_back("--microvm-initrd");
  if (unset.size() == 3) {
    return Missing("hypervisor",
                   "not configured: no hypervisor (--microvm-hypervisor), guest kernel "
                   "(--microvm-kernel) or image (--microvm-initrd) was given");
  }
  if (!unset.empty()) {
    return Missing(facts.hypervisor.empty() ? "hypervisor"
                   : facts.kernel.empty()   ? "kernel"
                                            : "initrd",
                   absl::StrCat("not configured: ", absl::StrJoin(unset, ", "), " not given"));
  }
  if (!facts.hypervisor_problem.empty()) {
    return Missing("hypervisor",
                   absl::StrCat("hypervisor ", facts.hypervisor, ": ", facts.hypervisor_problem),
                   "apt-get install qemu-system-x86");
  }
  if (!facts.kernel_problem.empty()) {
    return Missing("kernel",
                   absl::StrCat("guest kernel ", facts.kernel, ": ", facts.kernel_problem),
                   "scripts/microvm-image.sh DIR");
  }
  if (!facts.initrd_problem.empty()) {
    return Missing("initrd", absl::StrCat("guest image ", facts.initrd, ": ", facts.initrd_problem),
                   "scripts/microvm-image.sh DIR");
  }
  const std::string when = absl::StrCat(
      "probed ", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", facts.taken, absl::UTCTimeZone()));
  if (facts.boots.empty()) {
    return Missing("kvm", absl::StrCat("KVM not usable (",
                                       facts.kvm_problem.empty() ? "not tried" : facts.kvm_problem,
                                       ") and no other accelerator allowed; ", when));
  }
  std::vector<std::string> tries;
  if (!facts.kvm_problem.empty()) tries.push_back(absl::StrCat("kvm: ", facts.kvm_problem));
  for (const BootAttempt& boot : facts.boots) tries.push_back(DescribeBoot(boot));
  const BootAttempt& last = facts.boots.back();
  if (!last.reached_marker) {
    return Missing("boot", absl::StrCat("probe boot failed: ", absl::StrJoin(tries, "; "), "; ",
                                        Parts(facts), "; ", when));
  }
  v1::ProbeResult result;
  result.set_available(true);
  result.set_backend(v1::SANDBOX_BACKEND_MICROVM);
  tries.pop_back();
  std::string note =
      absl::StrCat("probe boot reached its marker with ", last.accel, " in ", Seconds(last.took));
  if (!tries.empty()) absl::StrAppend(&note, " (", absl::StrJoin(tries, "; "), ")");
  absl::StrAppend(&note, "; ", Parts(facts), "; ", when);
  result.set_note(std::move(note));
  return result;
}

std::string MicrovmBootLine(const v1::ProbeResult& microvm) {
  return absl::StrCat(microvm.available() ? "microVM available (" : "microVM unavailable (",
                      microvm.note(), ")");
}

}  // namespace ccsandbox::broker::microvm
