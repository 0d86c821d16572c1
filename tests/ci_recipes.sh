#!/usr/bin/env bash
# The README's CI recipes ("In another project's CI") run here: the YAML after each
# `<!-- ci-recipe: NAME -->` is parsed (python3-yaml), its commands taken in order (GitHub
# Actions: the steps' `run`; GitLab CI: the job's `script`), and every command after the
# package install is run in a fresh folder with this build's kvbench for `kvbench`, cases/ for
# /usr/share/kvbench/cases and examples/numpy/dequantize_backend.py for ci/kvbench_backend.py.
# Each recipe must pass and leave its JUnit report; with an error planted in the backend the
# same commands must fail (so a recipe that checks nothing cannot pass). The recipes' install
# command must name the file cpack makes and the packages the README's quick start needs.
# The shard matrix (github-shards): each shard's commands run with its ${{ matrix.shard }},
# then the report job's on the shards' JUnit files; the merged report must hold every case
# once, and the shards' goldens together must be the unsharded folder byte for byte. There
# cases/kvbench.DequantizeGroup stands in for the model pack: the example backend implements
# that operator only, and a shard of the model pack takes minutes.
# Usage: ci_recipes.sh KVBENCH SOURCE_DIR WORK_DIR
set -uo pipefail
kvbench=$1 src=$2 work=$3
. "$src/tests/find_python.sh"
require_python numpy,xxhash,yaml
rm -rf "$work" && mkdir -p "$work"
"$python" - "$src/README.md" "$work" <<'PY' || exit 1
import re, sys, yaml
readme, work = sys.argv[1:3]
text = open(readme).read()
recipes = re.findall(r"<!-- ci-recipe: ([\w-]+) -->\s*```yaml\n(.*?)```", text, re.S)
names = sorted(n for n, _ in recipes)
if names != ["github", "github-shards", "gitlab"]:
    sys.exit("FAIL: the README's recipes are %s, want github, github-shards and gitlab" % names)


def after_install(name, commands):
    install = [c for c in commands if "apt-get install" in c]
    if len(install) != 1 or not re.search(r"\./\S*kvbench_[0-9.]+_amd64\.deb", install[0]):
        sys.exit("FAIL: %s: no apt-get install of the kvbench_<version>_amd64.deb cpack writes" % name)
    return commands[commands.index(install[0]) + 1:]


def uploads(name, steps, path):
    up = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact")]
    if not up or up[0].get("if") != "always()" or up[0]["with"]["path"] != path:
        sys.exit("FAIL: %s: no upload of %s that runs always()" % (name, path))


def write(name, commands):
    with open("%s/%s.commands" % (work, name), "w") as f:
        f.write("\n".join(commands) + "\n")
    print("ok: %s recipe parsed, %d commands after the install" % (name, len(commands)))


for name, body in recipes:
    doc = yaml.safe_load(body)
    if name == "github-shards":
        shard, report = doc["jobs"]["shard"], doc["jobs"]["report"]
        values = shard["strategy"]["matrix"]["shard"]
        n = len(values)
        if values != list(range(1, n + 1)) or shard["strategy"].get("fail-fast") is not False:
            sys.exit("FAIL: %s: the matrix must be shard: [1..N] with fail-fast: false" % name)
        rest = after_install(name, [s["run"] for s in shard["steps"] if "run" in s])
        for c in rest:
            if c.startswith("kvbench golden") and "--shard ${{ matrix.shard }}/%d" % n not in c:
                sys.exit("FAIL: %s: %r does not write shard ${{ matrix.shard }}/%d" % (name, c, n))
        if not any("--junit kvbench-${{ matrix.shard }}.xml" in c for c in rest):
            sys.exit("FAIL: %s: no command writes --junit kvbench-${{ matrix.shard }}.xml" % name)
        uploads(name, shard["steps"], "kvbench-${{ matrix.shard }}.xml")
        if report.get("needs") != "shard" or report.get("if") != "always()":
            sys.exit("FAIL: %s: the report job must need shard and run always()" % name)
        merged = after_install(name + " report", [s["run"] for s in report["steps"] if "run" in s])
        if not any("kvbench.junit merge --shards %d -o kvbench.xml" % n in c for c in merged):
            sys.exit("FAIL: %s: the report job does not merge %d shards into kvbench.xml" % (name, n))
        uploads(name + " report", report["steps"], "kvbench.xml")
        write(name, rest)
        write(name + ".report", merged)
        with open("%s/%s.shards" % (work, name), "w") as f:
            f.write("%d\n" % n)
        continue
    if name == "github":
        steps = next(iter(doc["jobs"].values()))["steps"]
        commands = [s["run"] for s in steps if "run" in s]
        uploads(name, steps, "kvbench.xml")
    else:
        job = next(iter(doc.values()))
        commands = job["script"]
        artifacts = job["artifacts"]
        if artifacts.get("when") != "always" or artifacts["reports"]["junit"] != "kvbench.xml":
            sys.exit("FAIL: gitlab: no JUnit report kvbench.xml kept always")
    rest = after_install(name, commands)
    if not any("--junit kvbench.xml" in c for c in rest):
        sys.exit("FAIL: %s: no command writes --junit kvbench.xml" % name)
    write(name, rest)
PY
fail=0
# run_recipe NAME BACKEND_ARGS SUFFIX [SHARD]: the recipe's commands, rewritten for this
# machine, in a fresh folder (NAME.commands; a shard's with ${{ matrix.shard }} = SHARD).
run_recipe() {
  local name=$1 extra=$2 dir=$work/$1$3 shard=${4:-}
  mkdir -p "$dir/bin" "$dir/ci"
  ln -sf "$kvbench" "$dir/bin/kvbench"
  printf '#!/bin/sh\nexec %s %s "$@" %s\n' "$python" "$src/examples/numpy/dequantize_backend.py" "$extra" > "$dir/ci/kvbench_backend.py"
  chmod +x "$dir/ci/kvbench_backend.py"
  (cd "$dir" && PATH="$dir/bin:$PATH" &&
    while IFS= read -r line; do
      line=${line//\/usr\/share\/kvbench\/cases\/models/$src/cases/kvbench.DequantizeGroup}
      line=${line//\/usr\/share\/kvbench\/cases/$src/cases}
      line=${line//python3 ci\/kvbench_backend.py/ci\/kvbench_backend.py}
      line=${line//python3 -m kvbench./PYTHONPATH=$src/python $python -m kvbench.}
      line=${line//\$\{\{ matrix.shard \}\}/$shard}
      echo "+ $line"
      bash -c "$line" || exit 1
    done < "$work/$name.commands") > "$dir.log" 2>&1
}
# run_shards SUFFIX BACKEND_ARGS: every shard of github-shards, then its report job on their
# JUnit files (in SUFFIX's report folder). The report job's exit status is returned.
run_shards() {
  local suffix=$1 extra=$2 n i
  n=$(cat "$work/github-shards.shards")
  for i in $(seq 1 "$n"); do run_recipe github-shards "$extra" "$suffix-$i" "$i"; done
  mkdir -p "$work/github-shards.report$suffix"
  for i in $(seq 1 "$n"); do
    cp "$work/github-shards$suffix-$i/kvbench-$i.xml" "$work/github-shards.report$suffix/" 2> /dev/null
  done
  run_recipe github-shards.report "" "$suffix"
}
for name in github gitlab; do
  if run_recipe $name "" "" && grep -q "<testcase" "$work/$name/kvbench.xml" && ! grep -q "<failure" "$work/$name/kvbench.xml"; then
    echo "ok: $name recipe passes ($(grep -c '<testcase' "$work/$name/kvbench.xml") test cases in kvbench.xml)"
  else
    echo "FAIL: $name recipe:"; tail -15 "$work/$name.log"; fail=1
  fi
  if run_recipe $name --plant -planted; then
    echo "FAIL: $name recipe passed with an error planted in the backend"; fail=1
  elif grep -q "<failure" "$work/$name-planted/kvbench.xml" 2> /dev/null; then
    echo "ok: $name recipe fails on the planted error, the failures in kvbench.xml"
  else
    echo "FAIL: $name recipe with the planted error left no failure in kvbench.xml"; tail -5 "$work/$name-planted.log"; fail=1
  fi
done

# The shard matrix: every case once in the merged report, the goldens independent of N.
want=$("$kvbench" list "$src/cases/kvbench.DequantizeGroup" | tail -1 | cut -d' ' -f1)
merged=$work/github-shards.report/kvbench.xml
if run_shards "" "" && [ "$(grep -c '<testcase' "$merged")" = "$want" ] && ! grep -q "<failure\|<error" "$merged"; then
  echo "ok: github-shards: $(cat "$work/github-shards.shards") shards, $want cases once each in the merged kvbench.xml, all passed"
else
  echo "FAIL: github-shards (want $want cases in $merged):"; tail -5 "$work"/github-shards*.log; fail=1
fi
"$kvbench" golden "$src/cases/kvbench.DequantizeGroup" -o "$work/unsharded" > /dev/null 2>&1
mkdir -p "$work/sharded"
cp "$work"/github-shards-*/golden/* "$work/sharded/" 2> /dev/null
if diff -r "$work/unsharded" "$work/sharded" > /dev/null; then
  echo "ok: the shards' goldens together are the unsharded folder, byte for byte"
else
  echo "FAIL: kvbench golden --shard i/N wrote other files than one unsharded run"; fail=1
fi
if run_shards -planted --plant; then
  echo "FAIL: github-shards passed with an error planted in the backend"; fail=1
elif grep -q "<failure" "$work/github-shards.report-planted/kvbench.xml" 2> /dev/null; then
  echo "ok: github-shards fails on the planted error, the failures in the merged kvbench.xml"
else
  echo "FAIL: github-shards with the planted error left no failure in the merged report"; fail=1
fi
# A shard that wrote no report (its job died) fails the merge, by name.
rm -f "$work/github-shards.report/kvbench-2.xml" "$work/github-shards.report/kvbench.xml"
if run_recipe github-shards.report "" "" || ! grep -q "missing-shard-report" "$merged"; then
  echo "FAIL: the merge of 3 reports for 4 shards passed or did not name the missing shard"; fail=1
else
  echo "ok: a missing shard report fails the merged report (missing-shard-report)"
fi
exit $fail
