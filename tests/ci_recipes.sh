#!/usr/bin/env bash
# The README's CI recipes ("In another project's CI") run here: the YAML after each
# `<!-- ci-recipe: NAME -->` is parsed (python3-yaml), its commands taken in order (GitHub
# Actions: the steps' `run`; GitLab CI: the job's `script`), and every command after the
# package install is run in a fresh folder with this build's kvbench for `kvbench`, cases/ for
# /usr/share/kvbench/cases and examples/numpy/dequantize_backend.py for ci/kvbench_backend.py.
# Each recipe must pass and leave its JUnit report; with an error planted in the backend the
# same commands must fail (so a recipe that checks nothing cannot pass). The recipes' install
# command must name the file cpack makes and the packages the README's quick start needs.
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
recipes = re.findall(r"<!-- ci-recipe: (\w+) -->\s*```yaml\n(.*?)```", text, re.S)
names = sorted(n for n, _ in recipes)
if names != ["github", "gitlab"]:
    sys.exit("FAIL: the README's recipes are %s, want github and gitlab" % names)
for name, body in recipes:
    doc = yaml.safe_load(body)
    if name == "github":
        jobs = doc["jobs"]
        steps = next(iter(jobs.values()))["steps"]
        commands = [s["run"] for s in steps if "run" in s]
        uploads = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact")]
        if not uploads or uploads[0].get("if") != "always()" or uploads[0]["with"]["path"] != "kvbench.xml":
            sys.exit("FAIL: github: no upload of kvbench.xml that runs always()")
    else:
        job = next(iter(doc.values()))
        commands = job["script"]
        artifacts = job["artifacts"]
        if artifacts.get("when") != "always" or artifacts["reports"]["junit"] != "kvbench.xml":
            sys.exit("FAIL: gitlab: no JUnit report kvbench.xml kept always")
    install = [c for c in commands if "apt-get install" in c]
    if len(install) != 1 or not re.search(r"\./\S*kvbench_[0-9.]+_amd64\.deb", install[0]):
        sys.exit("FAIL: %s: no apt-get install of the kvbench_<version>_amd64.deb cpack writes" % name)
    rest = commands[commands.index(install[0]) + 1:]
    if not any("--junit kvbench.xml" in c for c in rest):
        sys.exit("FAIL: %s: no command writes --junit kvbench.xml" % name)
    with open("%s/%s.commands" % (work, name), "w") as f:
        f.write("\n".join(rest) + "\n")
    print("ok: %s recipe parsed, %d commands after the install" % (name, len(rest)))
PY
fail=0
# run_recipe NAME BACKEND_ARGS: the recipe's commands, rewritten for this machine, in a fresh folder.
run_recipe() {
  local name=$1 extra=$2 dir=$work/$1$3
  mkdir -p "$dir/bin" "$dir/ci"
  ln -s "$kvbench" "$dir/bin/kvbench"
  printf '#!/bin/sh\nexec %s %s "$@" %s\n' "$python" "$src/examples/numpy/dequantize_backend.py" "$extra" > "$dir/ci/kvbench_backend.py"
  chmod +x "$dir/ci/kvbench_backend.py"
  (cd "$dir" && PATH="$dir/bin:$PATH" &&
    while IFS= read -r line; do
      line=${line//\/usr\/share\/kvbench\/cases/$src/cases}
      line=${line//python3 ci\/kvbench_backend.py/ci\/kvbench_backend.py}
      echo "+ $line"
      bash -c "$line" || exit 1
    done < "$work/$name.commands") > "$dir.log" 2>&1
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
exit $fail
