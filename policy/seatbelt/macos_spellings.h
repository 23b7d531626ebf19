// The spellings macOS gives paths under its firmlinked top-level symlinks (/tmp ->
// /private/tmp, /var -> /private/var, /etc -> /private/etc), as a PathResolver, so a profile for
// a Mac can be rendered and reviewed on any host. Pure: it knows only those three links, so
// on a real Mac the launcher uses the real resolver (base/real_host_view.h) instead.
#ifndef CCSANDBOX_POLICY_SEATBELT_MACOS_SPELLINGS_H_
#define CCSANDBOX_POLICY_SEATBELT_MACOS_SPELLINGS_H_

#include <optional>
#include <string>

#include "base/host_view.h"

namespace ccsandbox::policy::seatbelt {

class MacosSpellings : public PathResolver {
 public:
  // "/tmp/x" -> "/private/tmp/x" (and /var, /etc); any other absolute path as it is; nullopt
  // for a relative one (a placeholder), which the renderer then keeps as written.
  std::optional<std::string> Resolve(const std::string& path) const override;
};

}  // namespace ccsandbox::policy::seatbelt

#endif  // CCSANDBOX_POLICY_SEATBELT_MACOS_SPELLINGS_H_
