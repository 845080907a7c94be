//===- libomptarget_probe.cpp - Which libomptarget a program loads --------===//
#include "tools/libomptarget_probe.h"

#include "common/log.h"

#include <cstdlib>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

namespace ompdpu::tools {

namespace {

std::vector<std::string> splitPath(const std::string &S) {
  std::vector<std::string> Out;
  size_t Start = 0;
  while (Start <= S.size()) {
    size_t End = S.find(':', Start);
    if (End == std::string::npos)
      End = S.size();
    if (End > Start)
      Out.push_back(S.substr(Start, End - Start));
    Start = End + 1;
  }
  return Out;
}

/// $ORIGIN and ${ORIGIN} replaced by the program's directory.
std::string expandOrigin(std::string Dir, const std::string &Origin) {
  for (const char *Token : {"${ORIGIN}", "$ORIGIN"})
    for (size_t P; (P = Dir.find(Token)) != std::string::npos;)
      Dir.replace(P, std::char_traits<char>::length(Token), Origin);
  return Dir;
}

bool isFile(const std::string &Path) { return access(Path.c_str(), R_OK) == 0; }

/// Program as execvp would find it.
std::string findProgram(const std::string &Program) {
  if (Program.find('/') != std::string::npos)
    return Program;
  const char *Path = std::getenv("PATH");
  for (const std::string &Dir : splitPath(Path ? Path : "/usr/bin:/bin"))
    if (access((Dir + "/" + Program).c_str(), X_OK) == 0)
      return Dir + "/" + Program;
  return "";
}

std::string dirName(const std::string &Path) {
  size_t Slash = Path.rfind('/');
  return Slash == std::string::npos ? "." : Path.substr(0, Slash);
}

} // namespace

Expected<DynamicInfo> readDynamic(const std::string &File) {
  if (elf_version(EV_CURRENT) == EV_NONE)
    return Status::error("libelf: " + std::string(elf_errmsg(-1)));
  int Fd = open(File.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return Status::error("cannot open " + File);
  Elf *E = elf_begin(Fd, ELF_C_READ, nullptr);
  DynamicInfo D;
  bool Found = false;
  for (Elf_Scn *S = E ? elf_nextscn(E, nullptr) : nullptr; S;
       S = elf_nextscn(E, S)) {
    GElf_Shdr H;
    Elf_Data *Data;
    if (!gelf_getshdr(S, &H) || H.sh_type != SHT_DYNAMIC || !H.sh_entsize ||
        !(Data = elf_getdata(S, nullptr)))
      continue;
    Found = true;
    for (size_t K = 0; K < H.sh_size / H.sh_entsize; ++K) {
      GElf_Dyn Dyn;
      if (!gelf_getdyn(Data, static_cast<int>(K), &Dyn))
        break;
      const char *Str = elf_strptr(E, H.sh_link, Dyn.d_un.d_val);
      if (Dyn.d_tag == DT_NEEDED && Str)
        D.Needed.push_back(Str);
      else if (Dyn.d_tag == DT_RPATH && Str)
        D.RPath = Str;
      else if (Dyn.d_tag == DT_RUNPATH && Str)
        D.RunPath = Str;
      else if (Dyn.d_tag == DT_SONAME && Str)
        D.SoName = Str;
    }
  }
  if (E)
    elf_end(E);
  close(Fd);
  if (!Found)
    return Status::error(File + " has no dynamic section");
  return D;
}

std::vector<std::string> searchDirs(const DynamicInfo &D,
                                    const std::string &Origin,
                                    const char *LdLibraryPath) {
  std::vector<std::string> Dirs;
  auto Add = [&](const std::string &List) {
    for (const std::string &Dir : splitPath(List))
      Dirs.push_back(expandOrigin(Dir, Origin));
  };
  if (D.RunPath.empty())
    Add(D.RPath);
  Add(LdLibraryPath ? LdLibraryPath : "");
  Add(D.RunPath);
  // The system's directories (ld.so.cache holds what they hold, on Debian).
#if defined(__aarch64__)
  Add("/lib/aarch64-linux-gnu:/usr/lib/aarch64-linux-gnu:/lib:/usr/lib");
#else
  Add("/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib:/usr/lib");
#endif
  return Dirs;
}

int libomptargetMajor(const std::string &SoName, const std::string &Path) {
  const std::string Base = "libomptarget.so";
  if (SoName.rfind(Base, 0) != 0)
    return 0;
  if (SoName.size() > Base.size() + 1 && SoName[Base.size()] == '.')
    return std::atoi(SoName.c_str() + Base.size() + 1);
  if (SoName.size() != Base.size())
    return 0;
  // Debian's unversioned libomptarget 14 lives in /usr/lib/llvm-14/lib.
  size_t P = Path.rfind("/llvm-");
  int Dir = P == std::string::npos ? 0 : std::atoi(Path.c_str() + P + 6);
  return Dir > 0 ? Dir : 14;
}

namespace {
/// The probe of one ELF file (a program or a library).
LibomptargetProbe probeFile(const std::string &Exe, const char *LdLibraryPath);
} // namespace

LibomptargetProbe probeLibomptarget(const std::string &Program,
                                    const char *LdLibraryPath) {
  return probeFile(findProgram(Program), LdLibraryPath);
}

LibomptargetProbe probeCommand(char *const *Argv, const char *LdLibraryPath) {
  LibomptargetProbe P = probeLibomptarget(Argv[0], LdLibraryPath);
  for (char *const *A = Argv + 1; P.Needed.empty() && *A; ++A)
    if (isFile(*A))
      P = probeFile(*A, LdLibraryPath);
  return P;
}

namespace {
LibomptargetProbe probeFile(const std::string &Exe, const char *LdLibraryPath) {
  LibomptargetProbe R;
  auto D = Exe.empty() ? Expected<DynamicInfo>(Status::error("not found"))
                       : readDynamic(Exe);
  if (!D) {
    OMPDPU_DEBUG_LOG("%s: %s", Exe.c_str(), D.status().message().c_str());
    return R;
  }
  for (const std::string &N : D->Needed)
    if (libomptargetMajor(N, "")) {
      R.Needed = N;
      break;
    }
  if (R.Needed.empty())
    return R;
  char *Real = realpath(Exe.c_str(), nullptr);
  std::string Origin = dirName(Real ? Real : Exe);
  std::free(Real);
  for (const std::string &Dir : searchDirs(*D, Origin, LdLibraryPath))
    if (isFile(Dir + "/" + R.Needed)) {
      R.Path = Dir + "/" + R.Needed;
      break;
    }
  // The file's own soname, when it is found: a rebuilt library may say more
  // than the name the program asks for.
  auto Lib = R.Path.empty() ? Expected<DynamicInfo>(Status::error(""))
                            : readDynamic(R.Path);
  std::string SoName = Lib && !Lib->SoName.empty() ? Lib->SoName : R.Needed;
  R.Major = libomptargetMajor(SoName, R.Path);
  return R;
}
} // namespace

} // namespace ompdpu::tools
