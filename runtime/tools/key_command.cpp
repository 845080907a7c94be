//===- key_command.cpp - `ompdpu key` -------------------------------------===//
#include "tools/key_command.h"

#include "auth/key_file.h"
#include "common/log.h"

#include <cstdio>
#include <cstring>

namespace ompdpu::tools {

int cmdKey(int Argc, char **Argv) {
  if (Argc != 2 || std::strcmp(Argv[0], "create") != 0) {
    std::fputs("usage: ompdpu key create FILE\n"
               "  a new key (mode 0600) for ompdpu-server --key FILE and its "
               "clients'\n"
               "  OMPDPU_KEY; it stands for its owner: give each user "
               "their own\n",
               stderr);
    return 2;
  }
  if (Status S = auth::createKeyFile(Argv[1]); !S.ok()) {
    log(LogLevel::Error, "%s", S.message().c_str());
    return 1;
  }
  std::printf("created key file %s\n", Argv[1]);
  return 0;
}

} // namespace ompdpu::tools
