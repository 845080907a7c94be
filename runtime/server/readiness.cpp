//===- readiness.cpp - tell systemd the server is ready -------------------===//
#include "server/readiness.h"

#include "common/log.h"

#ifdef OMPDPU_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace ompdpu::server {

void notifyReady(const std::string &Where) {
#ifdef OMPDPU_HAVE_SYSTEMD
  // Unset NOTIFY_SOCKET: session processes must not speak for the service.
  std::string Msg = "READY=1\nSTATUS=listening on " + Where;
  if (int Rc = sd_notify(/*unset_environment=*/1, Msg.c_str()); Rc < 0)
    log(LogLevel::Warning, "sd_notify: error %d", -Rc);
#else
  (void)Where;
#endif
}

} // namespace ompdpu::server
