#!/usr/bin/env bash
# `python3 -m kvbench.junit merge` (python/kvbench/junit.py) on good and hostile shard reports:
# the shards merge; a malformed, empty or missing report, one with a DOCTYPE/ENTITY declaration
# (billion laughs, an external entity), an HTML page, a root that is not testsuites/testsuite,
# a non-numeric time, a testcase nested in a testcase, a failure outside any testcase and an
# output folder that does not exist each stop the merge with one line naming the file, exit 2,
# no traceback and no output file; nested suites are merged, not dropped.
# Usage: junit_merge.sh KVBENCH SOURCE_DIR WORK_DIR
set -uo pipefail
src=$(realpath "$2") work=$(realpath -m "$3")
rm -rf "$work" && mkdir -p "$work"
cd "$work" || exit 1
export PYTHONPATH="$src/python" PYTHONDONTWRITEBYTECODE=1
fail=0
. "$src/tests/find_python.sh"
require_python numpy  # the package's __init__ imports numpy
merge() { timeout 30 "$python" -m kvbench.junit merge "$@"; }
cat > a.xml <<'X'
<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="kvbench" tests="2" failures="1"><testcase classname="op" name="a1" time="0.5"/>
<testcase classname="op" name="a2" time="1.5"><failure message="bad">bad</failure></testcase></testsuite></testsuites>
X
cat > b.xml <<'X'
<testsuite name="kvbench" tests="1"><testcase classname="op" name="b1" time="0.25"/></testsuite>
X
cat > nested.xml <<'X'
<testsuites><testsuite name="outer"><testsuite name="inner" tests="1"><testcase classname="op" name="n1" time="1"><failure message="x"/></testcase></testsuite></testsuite></testsuites>
X
merge a.xml b.xml -o merged.xml --shards 2 > good.log 2>&1
[ $? = 1 ] && grep -q 'tests="3" failures="1" errors="0"' merged.xml || { cat good.log; echo "FAIL: two good shards"; fail=1; }
merge nested.xml -o nested_out.xml > nested.log 2>&1
[ $? = 1 ] && grep -q 'tests="1" failures="1"' nested_out.xml || { cat nested.log; echo "FAIL: a nested suite's failure"; fail=1; }
cat > zero.xml <<'X'
<testsuites><testsuite name="kvbench" tests="0"/></testsuites>
X
merge zero.xml -o zero_out.xml > zero.log 2>&1 && grep -q 'tests="0"' zero_out.xml || { cat zero.log; echo "FAIL: a shard of truly zero cases"; fail=1; }
[ "$fail" = 0 ] && echo "ok: good shards merged (nested suites included, a shard of zero cases accepted)"

# Each hostile shard: exit 2, one line naming it, no traceback, no output.
printf '' > empty.xml
printf '<testsuites><testsuite><testcase name="x"' > truncated.xml
printf '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>502</h1></body></html>\n' > html.xml
printf '<html><body><h1>Bad Gateway</h1></body></html>\n' > html_no_doctype.xml
cat > laughs.xml <<'X'
<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<testsuite><testcase name="&lol3;"/></testsuite>
X
cat > external.xml <<'X'
<?xml version="1.0"?>
<!DOCTYPE t [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<testsuite><testcase name="&xxe;"/></testsuite>
X
printf '<testsuite><testcase classname="op" name="t" time="fast"/></testsuite>' > time_text.xml
printf '<testsuite><testcase classname="op" name="t" time="-1"/></testsuite>' > time_negative.xml
printf '<testsuite><testcase name="outer"><testcase name="inner"/></testcase></testsuite>' > case_in_case.xml
printf '<testsuite tests="1" failures="1"><failure message="whole suite failed"/></testsuite>' > suite_failure.xml
printf '<testsuite tests="4"><properties/></testsuite>' > declared_no_cases.xml
printf '<results><test name="x"/></results>' > other_root.xml
mkdir folder.xml
mkfifo fifo.xml
for bad in empty truncated html html_no_doctype laughs external time_text time_negative case_in_case suite_failure \
  declared_no_cases other_root missing folder fifo; do
  rm -f out.xml
  merge a.xml "$bad.xml" -o out.xml > "$bad.log" 2>&1
  rc=$?
  if [ "$rc" != 2 ] || [ "$(wc -l < "$bad.log")" != 1 ] || ! grep -qF "$bad.xml" "$bad.log" ||
    grep -q Traceback "$bad.log" || [ -e out.xml ]; then
    cat "$bad.log"
    echo "FAIL: $bad: exit $rc (want 2 with one line naming $bad.xml and no output file)"
    fail=1
  fi
done
merge a.xml -o no_such_folder/out.xml > no_folder.log 2>&1
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l < no_folder.log)" = 1 ] && grep -qF "no_such_folder" no_folder.log ||
  { cat no_folder.log; echo "FAIL: missing output folder: exit $rc"; fail=1; }
[ "$fail" = 0 ] && echo "ok: 15 hostile shard reports and a missing output folder refused with one line, exit 2"
exit $fail
