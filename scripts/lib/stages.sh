# shellcheck shell=bash
# Long scripts say how long (sourced, not run): the expected duration at the
# start, then a line per stage with the time elapsed and the time left. What is
# left comes from each stage's time in the last run on this machine (recorded
# in ~/.cache/ompdpu/stage-times/<run>), else from the script's own estimate.
#
#   stages_begin NAME RUN STAGE=SECONDS...
#       NAME prefixes the lines ("bench"); RUN names the record (bench-quick);
#       each STAGE=SECONDS is a stage in order with its built-in estimate.
#   stage STAGE COMMAND...
#       run COMMAND (a function too) as that stage; its status is the
#       command's (under set -e a failure ends the script, as without this
#       helper: do not call stage after || or &&); a stage that succeeds has
#       its time recorded for the next run.
#   stages_end
#       the total, and where the times are kept.
# Environment: XDG_CACHE_HOME (default ~/.cache).

_stages_name="" _stages_file="" _stages_t0=0 _stages_from=""
declare -a _stages_order=()
declare -A _stages_est=() _stages_done=()

# _stages_clock SECONDS: 1h02m, 12m05s, 40s.
_stages_clock() {
  local s=$1
  if ((s >= 3600)); then
    printf '%dh%02dm' $((s / 3600)) $((s % 3600 / 60))
  elif ((s >= 60)); then
    printf '%dm%02ds' $((s / 60)) $((s % 60))
  else
    printf '%ds' "$s"
  fi
}

# _stages_left FROM: the estimates of the stages from index FROM on.
_stages_left() {
  local k sum=0
  for ((k = $1; k < ${#_stages_order[@]}; k++)); do
    ((sum += _stages_est[${_stages_order[k]}]))
  done
  echo "$sum"
}

stages_begin() {
  _stages_name=$1
  local dir=${XDG_CACHE_HOME:-$HOME/.cache}/ompdpu/stage-times spec name secs recorded=0
  _stages_file=$dir/$2
  shift 2
  _stages_order=()
  for spec in "$@"; do
    _stages_order+=("${spec%%=*}")
    _stages_est[${spec%%=*}]=${spec#*=}
  done
  # The record: "STAGE SECONDS" lines of the last run here.
  if [[ -r $_stages_file ]]; then
    while read -r name secs; do
      [[ -n ${_stages_est[$name]+x} && $secs =~ ^[0-9]+$ ]] || continue
      _stages_est[$name]=$secs
      recorded=1
    done <"$_stages_file"
  fi
  _stages_from="a built-in estimate"
  ((recorded)) && _stages_from="the last run on this machine, $(date -r "$_stages_file" '+%Y-%m-%d %H:%M')"
  _stages_t0=$SECONDS
  echo "$_stages_name: expected duration about $(_stages_clock "$(_stages_left 0)") in" \
    "${#_stages_order[@]} stages (${_stages_order[*]}), from $_stages_from" >&2
}

stage() {
  local name=$1 k index=0 start rc
  shift
  for ((k = 0; k < ${#_stages_order[@]}; k++)); do
    [[ ${_stages_order[k]} == "$name" ]] && index=$k
  done
  local elapsed=$((SECONDS - _stages_t0))
  echo "$_stages_name: [$((index + 1))/${#_stages_order[@]}] $name (about" \
    "$(_stages_clock "${_stages_est[$name]:-0}")): $(_stages_clock "$elapsed") elapsed," \
    "about $(_stages_clock "$(_stages_left "$index")") left" >&2
  start=$SECONDS
  "$@"
  rc=$?
  if ((rc == 0)); then
    _stages_done[$name]=$((SECONDS - start))
    _stages_save
  fi
  return "$rc"
}

# _stages_save: this run's stage times over the last run's (kept for the
# stages this run did not finish).
_stages_save() {
  local name tmp
  mkdir -p "$(dirname "$_stages_file")" 2>/dev/null || return 0
  tmp=$_stages_file.$$
  {
    for name in "${_stages_order[@]}"; do
      if [[ -n ${_stages_done[$name]+x} ]]; then
        echo "$name ${_stages_done[$name]}"
      elif [[ -r $_stages_file ]]; then
        grep "^$name " "$_stages_file" || :
      fi
    done
  } >"$tmp" 2>/dev/null && mv -f "$tmp" "$_stages_file" 2>/dev/null || rm -f "$tmp"
}

stages_end() {
  echo "$_stages_name: done in $(_stages_clock $((SECONDS - _stages_t0)))" \
    "(stage times kept in $_stages_file for the next run's estimate)" >&2
}
