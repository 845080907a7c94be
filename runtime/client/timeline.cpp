//===- timeline.cpp - OMPDPU_TRACE=<file>: a Chrome trace of the process --===//
#include "client/timeline.h"

#include "common/config.h"
#include "common/log.h"
#include "common/trace_time.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace ompdpu::client {

using protocol::MsgType;
using protocol::TraceEvent;

namespace {

void appendEscaped(std::string &Out, const std::string &S) {
  Out += '"';
  for (char C : S) {
    if (C == '"' || C == '\\') {
      Out += '\\';
      Out += C;
    } else if (static_cast<unsigned char>(C) < 0x20) {
      char Buf[8];
      std::snprintf(Buf, sizeof Buf, "\\u%04x", C);
      Out += Buf;
    } else {
      Out += C;
    }
  }
  Out += '"';
}

/// Microseconds, as Chrome's "ts" and "dur" want them, to the ns.
std::string micros(int64_t Ns) {
  char Buf[32];
  std::snprintf(Buf, sizeof Buf, "%.3f", Ns / 1000.0);
  return Buf;
}

/// Device k's session appears as its own process.
uint32_t processId(unsigned Process) {
  return Process ? 0x40000000u + Process - 1 : static_cast<uint32_t>(getpid());
}

} // namespace

Timeline *Timeline::active() {
  // Made on first use and never destroyed: connections closed from static
  // destructors in any order still find it.
  static Timeline *Line = [] {
    std::string P = traceSetting(std::getenv).File;
    return P.empty() ? nullptr : new Timeline(P);
  }();
  return Line;
}

Timeline::Timeline(std::string P)
    : Path(std::move(P)), Origin(std::chrono::steady_clock::now()) {}

int64_t Timeline::sinceOrigin(TimePoint T) const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(T - Origin)
      .count();
}

unsigned Timeline::addDevice(const std::string &Label) {
  std::lock_guard<std::mutex> L(M);
  Devices.push_back({Label, "", 0, 0, false});
  return static_cast<unsigned>(Devices.size() - 1);
}

void Timeline::request(unsigned Device, MsgType Type, uint32_t Id,
                       uint16_t Queue, uint64_t Bytes, TimePoint Issued,
                       TimePoint Done) {
  Event E;
  E.Async = true;
  E.Thread = currentThreadId();
  E.Name = protocol::typeName(Type);
  E.Category = "device " + std::to_string(Device);
  E.StartNs = sinceOrigin(Issued);
  E.DurationNs = sinceOrigin(Done) - E.StartNs;
  E.Bytes = Bytes;
  E.RequestId = Id;
  E.Queue = Queue;
  E.Device = Device;
  std::lock_guard<std::mutex> L(M);
  E.Id = NextAsyncId++;
  Events.push_back(std::move(E));
}

void Timeline::wait(unsigned Device, MsgType Type, TimePoint From,
                    TimePoint To) {
  Event E;
  E.Thread = currentThreadId();
  E.Name = std::string("wait ") + protocol::typeName(Type);
  E.Category = "wait";
  E.StartNs = sinceOrigin(From);
  E.DurationNs = sinceOrigin(To) - E.StartNs;
  E.Device = Device;
  std::lock_guard<std::mutex> L(M);
  Events.push_back(std::move(E));
}

void Timeline::session(unsigned Device, const protocol::TraceRecord &R,
                       const ClockMap &Clock) {
  int64_t OriginNs = sinceOrigin(TimePoint()); // steady clock's zero, from ours
  std::lock_guard<std::mutex> L(M);
  if (Device >= Devices.size())
    return;
  Devices[Device].SessionPid = R.SessionPid;
  Devices[Device].Dropped = R.Dropped;
  Devices[Device].Note =
      "clock offset known to " + micros(Clock.uncertaintyNs()) + " us";
  for (const TraceEvent &T : R.Events) {
    Event E;
    E.Process = Device + 1;
    E.Thread = T.Thread;
    E.Device = Device;
    E.StartNs = Clock.toClient(static_cast<int64_t>(T.StartNs)) + OriginNs;
    E.DurationNs = static_cast<int64_t>(T.DurationNs);
    if (T.What == TraceEvent::Kernel) {
      E.Name = R.Names[T.Name];
      E.Category = "kernel";
    } else {
      E.Async = true;
      E.Id = NextAsyncId++;
      E.Name = T.Type >= 1 && T.Type <= uint8_t(MsgType::Last)
                   ? protocol::typeName(static_cast<MsgType>(T.Type))
                   : "request";
      E.Category = "session";
      E.Bytes = T.Bytes;
      E.RequestId = T.RequestId;
      E.Queue = T.Queue;
    }
    Events.push_back(std::move(E));
  }
}

void Timeline::attached(unsigned Device) {
  std::lock_guard<std::mutex> L(M);
  if (Device < Devices.size())
    Devices[Device].Attached = true;
}

void Timeline::sessionMissing(unsigned Device, const std::string &Why) {
  std::lock_guard<std::mutex> L(M);
  if (Device < Devices.size())
    Devices[Device].Note = "no session events: " + Why;
}

Status Timeline::write() {
  std::string Out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  std::lock_guard<std::mutex> L(M);
  bool AnyAttached = false;
  for (const Device &D : Devices)
    AnyAttached = AnyAttached || D.Attached;
  if (!AnyAttached)
    return Status();
  auto meta = [&](uint32_t Pid, const char *What, const std::string &Name) {
    Out += "{\"ph\":\"M\",\"pid\":" + std::to_string(Pid) + ",\"name\":\"";
    Out += What;
    Out += "\",\"args\":{\"name\":";
    appendEscaped(Out, Name);
    Out += "}},\n";
  };
  char Host[256] = "";
  gethostname(Host, sizeof Host - 1);
  meta(processId(0), "process_name",
       std::string("host ") + Host + " (pid " + std::to_string(getpid()) + ")");
  for (size_t K = 0; K < Devices.size(); ++K) {
    const Device &D = Devices[K];
    std::string Name =
        "device " + std::to_string(K) + " (" + D.Label + ") session";
    if (D.SessionPid)
      Name += " pid " + std::to_string(D.SessionPid);
    if (!D.Note.empty())
      Name += "; " + D.Note;
    if (D.Dropped)
      Name += "; " + std::to_string(D.Dropped) + " events dropped";
    meta(processId(unsigned(K) + 1), "process_name", Name);
  }
  for (const Event &E : Events) {
    std::string Common = "\"pid\":" + std::to_string(processId(E.Process)) +
                         ",\"tid\":" + std::to_string(E.Thread) + ",\"cat\":";
    appendEscaped(Common, E.Category);
    Common += ",\"name\":";
    appendEscaped(Common, E.Name);
    std::string Args = "\"args\":{\"device\":" + std::to_string(E.Device);
    if (E.RequestId)
      Args += ",\"request\":" + std::to_string(E.RequestId);
    if (E.Queue >= 0)
      Args += ",\"queue\":" + std::to_string(E.Queue);
    if (E.Bytes)
      Args += ",\"bytes\":" + std::to_string(E.Bytes);
    Args += "}";
    if (!E.Async) {
      Out += "{\"ph\":\"X\"," + Common + ",\"ts\":" + micros(E.StartNs) +
             ",\"dur\":" + micros(E.DurationNs) + "," + Args + "},\n";
      continue;
    }
    char Id[48];
    std::snprintf(Id, sizeof Id, ",\"id\":\"0x%llx\"",
                  (unsigned long long)E.Id);
    Out += "{\"ph\":\"b\"," + Common + Id + ",\"ts\":" + micros(E.StartNs) +
           "," + Args + "},\n";
    Out += "{\"ph\":\"e\"," + Common + Id +
           ",\"ts\":" + micros(E.StartNs + E.DurationNs) + "},\n";
  }
  Out.resize(Out.size() - 2); // the last ",\n"
  Out += "\n]}\n";
  // Whole or not at all: a reader never sees half a file.
  std::string Tmp = Path + ".tmp" + std::to_string(getpid());
  FILE *F = std::fopen(Tmp.c_str(), "w");
  if (!F)
    return Status::error(
        format("cannot write trace %s: %s", Tmp.c_str(), std::strerror(errno)));
  bool Ok = std::fwrite(Out.data(), 1, Out.size(), F) == Out.size();
  Ok = std::fclose(F) == 0 && Ok;
  if (!Ok || std::rename(Tmp.c_str(), Path.c_str()) != 0) {
    Status S = Status::error(format("cannot write trace %s: %s", Path.c_str(),
                                    std::strerror(errno)));
    std::remove(Tmp.c_str());
    return S;
  }
  return Status();
}

} // namespace ompdpu::client
