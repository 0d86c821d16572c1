# Sourced by the script tests: check NAME WANT_EXIT WANT_TEXT -- kvbench args... runs
# "$kvbench" with the args into "$work/NAME.log" and sets fail=1 unless it exits WANT_EXIT
# with WANT_TEXT in its output.
check() {
  local name=$1 want_exit=$2 want=$3; shift 4
  "$kvbench" "$@" > "$work/$name.log" 2>&1
  local got=$?
  if [ "$got" != "$want_exit" ] || ! grep -q -- "$want" "$work/$name.log"; then
    echo "FAIL: $name: exit $got (want $want_exit), output lacks '$want':"; tail -15 "$work/$name.log"; fail=1
  else
    echo "ok: $name"
  fi
}
