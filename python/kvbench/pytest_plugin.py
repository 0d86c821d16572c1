"""pytest plugin: one test per kvbench case, each given the case's golden (specs/python-package.md).

    import kvbench

    @kvbench.parametrize("cases/pmx.KeyValueCache", filter="quant_bit=8")
    def test_my_kernel(golden):                     # a kvbench.Golden; the test id is the case name
        kvbench.assert_matches(golden, my_kernel(golden.inputs, kvbench.attributes_of(golden)))

Loaded by the `pytest11` entry point once the package is installed, or with
`pytest -p kvbench.pytest_plugin`. Options: --kvbench-cases PATH (the cases of a test that takes
`golden` without the mark), --kvbench-cache DIR (env KVBENCH_CACHE; default pytest's cache
folder), --kvbench-binary PATH (env KVBENCH; default `kvbench` on PATH).

The cases and their hashes come from `kvbench list --hashes` at collection; once the selection
is final (-k, --lf), the goldens that are not in the cache yet are written by one `kvbench
golden --cases-from` per path, and each is moved into CACHE/<case_hash>-<kvbench version>/: a
changed case or another kvbench version has another folder; a folder, once there, is whole.
"""
import errno
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from .compare import poison
from .golden import GoldenError, check_manifest, load_golden, read_manifest_json

_GOLDENS = pytest.StashKey()


def parametrize(path, filter=None):
    """Marks a test that takes `golden`: one test per case of `path` (a case file or folder;
    relative to pytest's rootdir) whose name matches the POSIX extended regex `filter`."""
    return pytest.mark.kvbench(path, filter=filter)


def case_file_stem(name):
    """The file stem `kvbench golden` gives a case (src/runner/golden_case.cpp case_file_stem)."""
    out = []
    for c in name:
        if c in "[,":
            out.append(".")
        elif c == "=":
            out.append("-")
        elif c != "]":
            out.append(c if (c.isascii() and c.isalnum()) or c in "_-." else "_")
    return "".join(out)


class Case:
    """One case from `kvbench list --hashes`, and where its golden lives in the cache."""

    def __init__(self, name, case_hash, file, path, folder):
        self.name, self.case_hash, self.file, self.path, self.folder = name, case_hash, file, path, folder
        self.manifest = os.path.join(folder, case_file_stem(name) + ".json")

    def cached(self):
        return os.path.isfile(self.manifest) and os.path.isfile(self.manifest[:-5] + ".safetensors")

    def __repr__(self):
        return self.name


class Goldens:
    """The session's kvbench binary, cache folder, case lists and golden writes."""

    def __init__(self, config):
        self.config = config
        self.lists = {}
        self.errors = {}  # case name -> why its golden was not written
        self.repaired = []  # why cached goldens were removed and written anew
        self._binary = self._cache = self.version = None  # version: set with the binary

    def option(self, name, env):
        return self.config.getoption(name) or os.environ.get(env)

    @property
    def binary(self):
        if self._binary is None:
            binary = self.option("kvbench_binary", "KVBENCH") or shutil.which("kvbench")
            if not binary:
                raise pytest.UsageError("kvbench: no kvbench binary: give --kvbench-binary, set KVBENCH "
                                        "or put it on PATH")
            self._binary = os.path.abspath(binary) if os.sep in binary else binary
            version = self.run([self._binary, "--version"]).stdout.strip()
            self.version = re.sub(r"[^A-Za-z0-9._-]", "_", version)
        return self._binary

    @property
    def cache(self):
        if self._cache is None:
            cache = self.option("kvbench_cache", "KVBENCH_CACHE")
            if not cache and getattr(self.config, "cache", None) is None:
                raise pytest.UsageError("kvbench: no cache folder: give --kvbench-cache or set KVBENCH_CACHE "
                                        "(pytest's cache provider is disabled)")
            # Only the path at collection: the folder is made when a golden must be written
            # (prepare_cache), so a read-only cache that holds every golden is enough.
            base = getattr(self.config.cache, "_cachedir", None) if not cache else None
            self._cache = (os.path.abspath(cache) if cache else os.path.join(str(base), "d", "kvbench") if base
                           else str(self.config.cache.mkdir("kvbench")))
        return self._cache

    def prepare_cache(self):
        """The cache folder, made if need be; a one-line usage error naming it when it cannot be."""
        try:
            if os.path.exists(self.cache) and not os.path.isdir(self.cache):
                raise NotADirectoryError(errno.ENOTDIR, "it is a file, not a folder")
            os.makedirs(self.cache, exist_ok=True)
        except OSError as e:
            raise pytest.UsageError("kvbench: cannot use the cache folder %s: %s" % (self.cache, e.strerror or e)) from None
        return self.cache

    def run(self, argv):
        try:
            r = subprocess.run(argv, capture_output=True, text=True)
        except OSError as e:
            raise pytest.UsageError("kvbench: cannot run %s: %s" % (argv[0], e))
        if r.returncode != 0:
            raise pytest.UsageError("kvbench: `%s` exited %d:\n%s" % (" ".join(argv), r.returncode,
                                                                       (r.stderr or r.stdout).strip()))
        return r

    def cases(self, path, filter=None):
        """The cases of `path` (matching `filter`), as `kvbench list --hashes` names them."""
        key = (path, filter)
        if key not in self.lists:
            argv = [self.binary, "list", path, "--hashes"] + (["--filter", filter] if filter else [])
            rows = [line.split("\t") for line in self.run(argv).stdout.splitlines() if line]
            self.lists[key] = [Case(name, h, file, path, os.path.join(self.cache, "%s-%s" % (h, self.version)))
                               for name, h, file in rows]
        return self.lists[key]

    def repair(self, c):
        """Whether the cached golden of `c` is unusable (a truncated or corrupt manifest): then
        its two files are removed so that it is written anew, and the reason kept in
        self.repaired. (The data is verified against its checksums when the test loads it.)"""
        try:
            check_manifest(read_manifest_json(c.manifest), c.manifest)
            return False
        except GoldenError as e:
            reason = str(e)
        try:
            for path in (c.manifest, c.manifest[:-5] + ".safetensors"):
                if os.path.lexists(path):
                    os.remove(path)
        except OSError as e:
            raise pytest.UsageError("kvbench: the cached golden %s is corrupt (%s) and cannot be removed: %s"
                                    % (c.manifest, reason, e.strerror or e)) from None
        self.repaired.append(reason)
        return True

    def write(self, cases):
        """Writes the goldens of the cases that are not in the cache: (written, reused)."""
        missing = {}
        for c in cases:
            if not c.cached() or self.repair(c):
                missing.setdefault(c.path, {})[c.name] = c
        for path, named in missing.items():
            # A folder of this run's own beside the cache: the renames below stay on one file
            # system, and two runs that share the cache never see each other's half-written files.
            try:
                tmp = tempfile.mkdtemp(prefix=".writing-", dir=self.prepare_cache())
            except OSError as e:
                raise pytest.UsageError("kvbench: cannot write %d golden(s) into the cache folder %s: %s"
                                        % (len(named), self.cache, e.strerror or e)) from None
            try:
                with open(os.path.join(tmp, "cases.txt"), "w") as f:
                    f.write("".join(name + "\n" for name in named))
                out = os.path.join(tmp, "golden")
                r = subprocess.run([self.binary, "golden", path, "--cases-from", os.path.join(tmp, "cases.txt"),
                                    "-o", out], capture_output=True, text=True)
                for c in named.values():
                    stem = os.path.join(out, case_file_stem(c.name))
                    if os.path.isfile(stem + ".json"):
                        try:
                            os.makedirs(c.folder, exist_ok=True)
                            # The data first: the manifest's presence says the golden is whole.
                            os.replace(stem + ".safetensors", c.manifest[:-5] + ".safetensors")
                            os.replace(stem + ".json", c.manifest)
                        except OSError as e:
                            raise pytest.UsageError("kvbench: cannot put the golden of %s into the cache folder "
                                                    "%s: %s" % (c.name, c.folder, e.strerror or e)) from None
                    else:
                        self.errors[c.name] = "`kvbench golden` exited %d:\n%s" % (r.returncode, r.stderr.strip())
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        written = sum(len(named) for named in missing.values())
        return written, len(cases) - written


def pytest_addoption(parser):
    group = parser.getgroup("kvbench", "kvbench goldens (kvbench.parametrize)")
    group.addoption("--kvbench-cases", metavar="PATH",
                    help="case file or folder for the tests that take `golden` without a kvbench.parametrize mark")
    group.addoption("--kvbench-cache", metavar="DIR",
                    help="where goldens are kept between runs (env KVBENCH_CACHE; default: pytest's cache folder)")
    group.addoption("--kvbench-binary", metavar="PATH",
                    help="the kvbench program (env KVBENCH; default: kvbench on PATH)")


def pytest_configure(config):
    config.addinivalue_line("markers", "kvbench(path, filter=None): one test per kvbench case of path "
                                       "(kvbench.parametrize); the test takes `golden`")
    config.stash[_GOLDENS] = Goldens(config)


def pytest_generate_tests(metafunc):
    if "golden" not in metafunc.fixturenames:
        return
    mark = metafunc.definition.get_closest_marker("kvbench")
    option = metafunc.config.getoption("kvbench_cases")
    if mark:
        path, filter = mark.args[0], mark.kwargs.get("filter")
        path = os.path.join(str(metafunc.config.rootpath), path)
    elif option:
        path, filter = os.path.join(str(metafunc.config.invocation_params.dir), option), None
    else:
        return  # the golden fixture says what is missing
    cases = metafunc.config.stash[_GOLDENS].cases(os.path.abspath(path), filter)
    if not cases:
        raise pytest.UsageError("kvbench: no case of %s matches %r" % (path, filter))
    metafunc.parametrize("golden", cases, ids=[c.name for c in cases], indirect=True)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    # -k's grammar has no '=' or ',': each test also answers to its golden's stem, the case
    # name with '[' and ',' as '.', '=' as '-' (`-k kvc_fp.cache_layout-1.current_key-f16`).
    for item in items:
        case = getattr(item, "callspec", None) and item.callspec.params.get("golden")
        if isinstance(case, Case):
            item.extra_keyword_matches.add(case_file_stem(case.name))


def pytest_collection_finish(session):
    """Writes the goldens the selected tests need (after -k, -m and --lf deselected the rest)."""
    cases = {c.name: c for item in session.items
             for c in [getattr(item, "callspec", None) and item.callspec.params.get("golden")] if isinstance(c, Case)}
    if not cases:
        return
    goldens = session.config.stash[_GOLDENS]
    written, reused = goldens.write(list(cases.values()))
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter:
        for reason in goldens.repaired:
            reporter.write_line("kvbench: repaired the cache: removed a corrupt golden and wrote it anew: %s" % reason)
        reporter.write_line("kvbench: %d goldens written, %d reused from %s (%s %s)"
                            % (written, reused, goldens.cache, goldens.binary, goldens.version))


@pytest.fixture
def golden(request):
    """The kvbench.Golden of the test's case, the elements an in-place output must write
    poisoned in its inputs (as kvbench does before a dispatch: an unwritten one fails)."""
    case = getattr(request, "param", None)
    if not isinstance(case, Case):
        pytest.fail("kvbench: %s takes `golden` but has no kvbench.parametrize mark and no --kvbench-cases"
                    % request.node.nodeid, pytrace=False)
    goldens = request.config.stash[_GOLDENS]
    if not case.cached():
        pytest.fail("kvbench: no golden for %s: %s" % (case.name, goldens.errors.get(case.name, "not written")),
                    pytrace=False)
    try:
        g = load_golden(case.manifest)
    except GoldenError as e:  # corrupt after it was written (its checksums): one line, no traceback
        pytest.fail("kvbench: the cached golden of %s cannot be used: %s (remove %s to write it anew)"
                    % (case.name, e, case.folder), pytrace=False)
    g.kvbench_binary, g.case_file = goldens.binary, case.file  # for the repro line
    return poison(g)
