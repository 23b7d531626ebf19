#include "launcher/shim/oom_victim.h"

#include <fcntl.h>
#include <unistd.h>

namespace ccsandbox::launcher {

void PreferAsOomVictim() {
  const int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  (void)!write(fd, "1000", 4);
  close(fd);
}

}  // namespace ccsandbox::launcher
