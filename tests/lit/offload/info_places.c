// With no DPU configured, `ompdpu info` names every place it looked for one:
// $XDG_CONFIG_HOME/ompdpu/devices (else ~/.config/ompdpu/devices), then
// /etc/ompdpu/devices; and a devices file it found, by name.
// UNSUPPORTED: arm-vm
// RUN: rm -rf %t.xdg %t.home && mkdir -p %t.xdg/ompdpu %t.home
// RUN: env -u OMPDPU_DEVICES -u OMPDPU_CONFIG XDG_CONFIG_HOME=%t.xdg %ompdpu info \
// RUN:   | FileCheck %s --check-prefix=XDG -DDIR=%t.xdg
// XDG: ompdpu devices (from nowhere: OMPDPU_DEVICES unset, no devices file (tried [[DIR]]/ompdpu/devices, /etc/ompdpu/devices))
// XDG: no devices configured: OpenMP target regions run on the host
// RUN: env -u OMPDPU_DEVICES -u OMPDPU_CONFIG -u XDG_CONFIG_HOME HOME=%t.home %ompdpu info \
// RUN:   | FileCheck %s --check-prefix=HOME -DDIR=%t.home
// HOME: ompdpu devices (from nowhere: OMPDPU_DEVICES unset, no devices file (tried [[DIR]]/.config/ompdpu/devices, /etc/ompdpu/devices))
// RUN: echo 127.0.0.1:1 > %t.xdg/ompdpu/devices
// RUN: not env -u OMPDPU_DEVICES -u OMPDPU_CONFIG XDG_CONFIG_HOME=%t.xdg \
// RUN:   OMPDPU_CONNECT_TIMEOUT=0.5 %ompdpu info | FileCheck %s --check-prefix=FOUND -DDIR=%t.xdg
// FOUND: ompdpu devices (from [[DIR]]/ompdpu/devices{{[,)]}}
// FOUND: device 0 127.0.0.1:1 unreachable
int main(void) { return 0; }
