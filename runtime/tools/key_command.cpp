//===- key_command.cpp - `ompdpu key` -------------------------------------===//
#include "tools/key_command.h"

#include "auth/key_file.h"
#include "common/log.h"

#include <cstdio>
#include <cstring>

namespace ompdpu::tools {

int cmdKey(int Argc, char **Argv) {
  bool Force = Argc == 3 && !std::strcmp(Argv[1], "--force");
  const char *File = Argc == 2 ? Argv[1] : Force ? Argv[2] : nullptr;
  // An option where the file belongs is never taken for a file name.
  if (Argc < 2 || std::strcmp(Argv[0], "create") != 0 || !File ||
      File[0] == '-') {
    std::fputs("usage: ompdpu key create [--force] FILE\n"
               "  a new key (mode 0600) for ompdpu-server --key FILE and its "
               "clients'\n"
               "  OMPDPU_KEY; it stands for its owner: give each user "
               "their own\n"
               "  --force  replace FILE if it exists (servers holding the "
               "old key need the new one)\n",
               stderr);
    return 2;
  }
  if (Status S = auth::createKeyFile(File, Force); !S.ok()) {
    log(LogLevel::Error, "%s", S.message().c_str());
    return 1;
  }
  std::printf("%s key file %s\n", Force ? "wrote" : "created", File);
  return 0;
}

} // namespace ompdpu::tools
