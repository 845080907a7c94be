#!/usr/bin/env bash
# The manual pages of man/ against the commands: every option a command's
# --help prints (the --option words) is in its page, and every option the page
# documents is in that --help; each page renders with no warning (groff -ww,
# and man --warnings as lintian runs it), the installed forms too (gzipped,
# ompdpu-c++.1.gz a link to ompdpu-cc.1.gz).
#
#   tests/packaging/man_pages.sh BUILD_DIR [MAN_DIR]   (MAN_DIR: default <repo>/man)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=$(realpath "${1:?usage: man_pages.sh BUILD_DIR [MAN_DIR]}")
MAN=$(realpath "${2:-$REPO/man}")
failures=0
pass() { printf 'PASS: %s\n' "$*"; }
fail() { printf 'FAIL: man-pages: %s\n' "$*"; failures=$((failures + 1)); }
options() { grep -oE -- '--[A-Za-z][A-Za-z0-9-]*(:[a-z]+)?' | sed 's/-*$//' | sort -u; }
# The text of a page, one paragraph a line (no breaks inside an option).
page_text() { groff -man -Tascii -P-cbou -rLL=5000n "$1" 2>/dev/null; }

# check PAGE COMMAND-HELP-TEXT
check() {
  local page=$1 help=$2 name
  name=$(basename "$page")
  [[ -f $page ]] || { fail "$name: no such page"; return; }
  local in_help in_page missing extra
  in_help=$(options <<<"$help")
  in_page=$(page_text "$page" | options)
  [[ -n $in_help ]] || { fail "$name: the command's help lists no option"; return; }
  missing=$(comm -23 <(echo "$in_help") <(echo "$in_page") | tr '\n' ' ')
  extra=$(comm -13 <(echo "$in_help") <(echo "$in_page") | tr '\n' ' ')
  [[ -z $missing ]] || fail "$name: options of --help that the page does not mention: $missing"
  [[ -z $extra ]] || fail "$name: options in the page that --help does not print: $extra"
  [[ -n $missing$extra ]] || pass "$name: the $(wc -l <<<"$in_help") options of --help, no other"
}

# render PAGE [DIR]: no warnings (DIR: where .so requests resolve).
render() {
  local page=$1 dir=${2:-$(dirname "$1")} msg
  msg=$(cd "$dir" && zcat -f "$page" | groff -man -Tutf8 -ww -z 2>&1) || true
  [[ -z $msg ]] || fail "groff -ww $page: $msg"
  msg=$(cd "$dir" && LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null) || true
  [[ -z $msg ]] || fail "man --warnings -l $page: $msg"
  [[ -n $msg ]] || pass "renders without warnings: $page"
}

# ---- options --------------------------------------------------------------------------------
check "$MAN/ompdpu.1" "$("$BUILD/bin/ompdpu" --help 2>&1; "$BUILD/bin/ompdpu" testbed --help 2>&1)"
check "$MAN/ompdpu-server.8" "$("$BUILD/bin/ompdpu-server" --help 2>&1)"
# ompdpu-cc has no --help (its arguments are clang's): its own options are
# those of its argument loop.
check "$MAN/ompdpu-cc.1" "$(sed -n '/^while \[/,/^done/p' "$BUILD/bin/ompdpu-cc" | grep -E '^ *--.*\)')"
if [[ -x $BUILD/bin/ompdpu-train ]]; then
  check "$MAN/ompdpu-train.1" "$("$BUILD/bin/ompdpu-train" --help 2>&1)"
else
  echo "NOTE: no $BUILD/bin/ompdpu-train (training not built): ompdpu-train.1 only rendered"
fi

# ---- rendering --------------------------------------------------------------------------------
for page in "$MAN"/*.[1-8]; do
  render "$page"
done
# As installed: gzipped, the C++ wrapper's page a link to the C one's.
for page in man1/ompdpu.1.gz man1/ompdpu-cc.1.gz man1/ompdpu-c++.1.gz man8/ompdpu-server.8.gz; do
  if [[ -e $BUILD/man/$page ]]; then render "$page" "$BUILD/man"; else fail "no $BUILD/man/$page"; fi
done
[[ $(readlink "$BUILD/man/man1/ompdpu-c++.1.gz") == ompdpu-cc.1.gz ]] ||
  fail "man1/ompdpu-c++.1.gz is not a link to ompdpu-cc.1.gz"
# whatis/apropos find ompdpu-c++ by the NAME line of ompdpu-cc(1).
grep -q '^ompdpu\\-cc, ompdpu\\-c++ \\-' "$MAN/ompdpu-cc.1" ||
  fail "ompdpu-cc.1's NAME does not name ompdpu-c++"
((failures == 0)) || { echo "FAIL: man-pages: $failures problem(s)"; exit 1; }
echo "PASS: man-pages"
