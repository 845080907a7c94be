//===- config.h - Client configuration from the environment -----*- C++ -*-===//
#pragma once

#include "common/status.h"

#include <functional>
#include <string>
#include <vector>

namespace ompdpu {

/// A device address as written by the user: host and port.
struct DeviceAddress {
  std::string Host;
  uint16_t Port = 0;
  /// "host:port" (IPv6 hosts in brackets), as used in messages.
  std::string text() const;
};

/// OMPDPU_TRACE: unset, empty or 0: nothing; another number: a summary of
/// each device's requests at exit; anything else: the summary and a Chrome
/// trace written to that file ("%p" in it: the pid).
struct TraceSetting {
  bool Summary = false;
  std::string File;
};

/// Everything the plugin reads from the environment (and config file).
struct ClientConfig {
  /// The DPUs this process uses: OMPDPU_DEVICES as given, else its node's
  /// line of the devices file, shared among the node's local ranks
  /// (OMPDPU_DEVICE_SHARE: local-rank, the file's default, or all,
  /// OMPDPU_DEVICES's).
  std::vector<DeviceAddress> Devices;
  std::string DevicesFrom; ///< "OMPDPU_DEVICES" or the file's path
  std::string Hostname;    ///< the node name the file was read for
  std::vector<DeviceAddress> NodeDevices; ///< the node's DPUs before sharing
  /// How Devices were chosen from NodeDevices ("local rank 1 of 2 ...");
  /// empty when every listed DPU is used.
  std::string Share;
  /// Why a devices file gave this process no DPU (no line for its node).
  std::string NoDevicesReason;
  double ConnectTimeout = 5.0;    ///< OMPDPU_CONNECT_TIMEOUT, seconds
  double ResponseTimeout = 10.0;  ///< OMPDPU_TIMEOUT: silence before "dead"
  double HeartbeatInterval = 0.5; ///< OMPDPU_HEARTBEAT: ping after this
  double KernelTimeout = 0.0;     ///< OMPDPU_KERNEL_TIMEOUT: 0 = none
  double SpinMicros = 50.0;       ///< OMPDPU_SPIN_US: busy-poll before sleep
  /// OMPDPU_WAKE_SLICE_US: the time slice a thread asks for when it first
  /// sleeps for a reply to an asynchronous region's operation, so that its
  /// wake-ups preempt a computing thread on its core (see
  /// client/waiting_thread.h); 0 (the default): threads are left alone.
  double WakeSliceMicros = 0.0;
  /// OMPDPU_YIELD=1: a waiting thread yields its core every few
  /// microseconds while it polls (host processes sharing a core, as Open
  /// MPI's mpi_yield_when_idle).
  bool YieldWhenIdle = false;
  /// OMPDPU_AUTH: "key", "munge", "none" or "auto" (a key if there is one,
  /// else MUNGE if munged runs here, else none).
  std::string Auth = "auto";
  /// OMPDPU_KEY, else $XDG_CONFIG_HOME/ompdpu/key (~/.config/ompdpu/key).
  std::string KeyFile;
  /// KeyFile came from OMPDPU_KEY: a file that is not there is an error,
  /// not a reason to try MUNGE or no authentication.
  bool KeyFileGiven = false;
  std::string MungeSocket; ///< OMPDPU_MUNGE_SOCKET ("": munged's default)
  TraceSetting Trace;      ///< OMPDPU_TRACE
};

/// Looks up an environment variable (nullptr if unset).
using EnvLookup = std::function<const char *(const char *)>;

/// Parse one "host:port" or "[v6]:port" (port 0 only when allowed: a
/// listener's "any free port").
Expected<DeviceAddress> parseHostPort(const std::string &S,
                                      bool AllowPortZero = false);

/// OMPDPU_TRACE as Env has it (the one place it is read).
TraceSetting traceSetting(const EnvLookup &Env);

/// S without leading and trailing blanks (spaces, tabs, line ends).
std::string trimBlanks(const std::string &S);

/// Parse "host:port[,host:port...]"; whitespace around items is ignored.
Expected<std::vector<DeviceAddress>> parseDeviceList(const std::string &S);

/// Parse a number of at least Min (in Unit, for the message) for variable
/// Name.
Expected<double> parseSeconds(const char *Name, const std::string &Value,
                              double Min = 0, const char *Unit = "seconds");

/// The devices files tried in order: OMPDPU_CONFIG alone when set, else
/// $XDG_CONFIG_HOME/ompdpu/devices (or ~/.config/ompdpu/devices), then
/// /etc/ompdpu/devices.
std::vector<std::string> deviceFileCandidates(const EnvLookup &Env);

/// Read the configuration: OMPDPU_DEVICES, else the first devices file
/// (deviceFileCandidates) that exists, read for node Hostname (empty: this
/// machine's name); none: no devices. With a devices file, a process that
/// an MPI launcher started takes its local rank's share of its node's DPUs
/// (OMPDPU_DEVICE_SHARE=all: every one; =local-rank shares OMPDPU_DEVICES
/// too).
Expected<ClientConfig> loadClientConfig(const EnvLookup &Env,
                                        const std::string &Hostname = "");

} // namespace ompdpu
