//===- run_key.cpp - A key for the emulated DPUs of one run ---------------===//
#include "tools/run_key.h"

#include "auth/key_file.h"
#include "common/log.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace ompdpu::tools {

Expected<std::unique_ptr<RunKey>> RunKey::create() {
  if (const char *Given = std::getenv("OMPDPU_KEY"); Given && *Given) {
    auto K = auth::loadKeyFile(Given);
    if (!K)
      return K.status().withContext("OMPDPU_KEY");
    return std::unique_ptr<RunKey>(new RunKey("", Given));
  }
  const char *Tmp = std::getenv("TMPDIR");
  std::string Templ =
      std::string(Tmp && *Tmp ? Tmp : "/tmp") + "/ompdpu-run-key.XXXXXX";
  if (!mkdtemp(Templ.data())) // mode 0700
    return Status::error(format("cannot make a directory for this run's key "
                                "(%s): %s",
                                Templ.c_str(), std::strerror(errno)));
  std::string File = Templ + "/key";
  if (Status S = auth::createKeyFile(File); !S.ok()) {
    rmdir(Templ.c_str());
    return S;
  }
  return std::unique_ptr<RunKey>(new RunKey(Templ, File));
}

RunKey::~RunKey() {
  if (Dir.empty())
    return; // the user's key
  unlink(File.c_str());
  rmdir(Dir.c_str());
}

} // namespace ompdpu::tools
