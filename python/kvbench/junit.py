"""Merge the JUnit reports of a sharded kvbench job into one (the README's shard matrix):

    python3 -m kvbench.junit merge --shards 4 -o kvbench.xml kvbench-1.xml ... kvbench-4.xml

Every test case of every report lands in one <testsuite name="kvbench"> whose counts are the
sums. Nothing is lost in silence: with --shards N, fewer or more reports than N add an error
test case (a shard whose job died wrote none), and so does a case name that two reports hold
(shards that overlap). The output is written whole or not at all. A report that cannot be
merged (missing, empty, not well-formed XML, with a DOCTYPE or ENTITY declaration, not JUnit,
a non-numeric time, a <testcase> inside another) and an output folder that does not exist stop
the merge with one line naming the file, exit status 2. Standard library only.
"""
import argparse
import os
import stat
import sys
import tempfile
import xml.etree.ElementTree as ET


def _error_case(name, message):
    case = ET.Element("testcase", classname="kvbench-merge", name=name, time="0.000")
    ET.SubElement(case, "error", message=message).text = message
    return case


class ReportError(Exception):
    """A shard report that cannot be merged: the message names the file and the reason."""


_MAX_REPORT_BYTES = 1 << 30


def read_report(path):
    """The root element of a JUnit report: a regular, non-empty file of well-formed XML with no
    DOCTYPE or ENTITY declaration (no entity expansion, no external entity is ever parsed),
    whose root is <testsuites> or <testsuite>, every <testsuite> holding <testcase>s whose
    `time` is a non-negative number. Anything else is a ReportError naming the file."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the open
            raise ReportError("%s: not a regular file" % path)
        with open(path, "rb") as f:
            raw = f.read(_MAX_REPORT_BYTES + 1)
    except OSError as e:
        raise ReportError("%s: cannot read the report: %s" % (path, e.strerror or e)) from None
    if len(raw) > _MAX_REPORT_BYTES:
        raise ReportError("%s: larger than 1 GiB: not a JUnit report" % path)
    if not raw.strip():
        raise ReportError("%s: empty file: not a JUnit report (did the shard's job die before writing it?)" % path)
    upper = raw.upper()
    for declaration in (b"<!DOCTYPE", b"<!ENTITY"):
        # Also in UTF-16/32 encodings, where the bytes are interleaved with zeros.
        if declaration in upper or declaration in upper.replace(b"\x00", b""):
            raise ReportError("%s: has a %s declaration, which a JUnit report does not need: refused (no entity "
                              "expansion, no external entities)" % (path, declaration[2:].decode()))
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as e:
        raise ReportError("%s: not well-formed XML: %s" % (path, e)) from None
    if root.tag not in ("testsuites", "testsuite"):
        raise ReportError("%s: not a JUnit report: the root element is <%s>, not <testsuites> or <testsuite>"
                          % (path, str(root.tag)[:60]))
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    for suite in suites:
        for tag in ("failure", "error"):
            if suite.find(tag) is not None:
                raise ReportError("%s: <testsuite name=%r> holds a <%s> outside any <testcase>: not a JUnit report "
                                  "kvbench can merge" % (path, suite.get("name"), tag))
        for case in suite.iter("testcase"):
            if case.find("testcase") is not None:
                raise ReportError("%s: <testcase name=%r> holds another <testcase>: not a JUnit report"
                                  % (path, case.get("name")))
            t = case.get("time", "0")
            try:
                seconds = float(t)
            except ValueError:
                raise ReportError("%s: <testcase name=%r> has time=%r, not a number" % (path, case.get("name"), t)) from None
            if not (seconds >= 0 and seconds != float("inf")):
                raise ReportError("%s: <testcase name=%r> has time=%r, not a non-negative number"
                                  % (path, case.get("name"), t))
    declared = sum(int(s.get("tests")) for s in suites if (s.get("tests") or "").isdigit())
    cases = sum(1 for s in suites for _ in s.iter("testcase"))
    if declared and not cases:
        raise ReportError("%s: its <testsuite> elements declare %d tests but hold no <testcase>" % (path, declared))
    return root


def merge(paths, shards=None):
    """The merged <testsuites> element of the reports at `paths` (ReportError on one that
    cannot be read: see read_report). Test cases are taken from every <testsuite> at any depth
    (nested suites included), each once."""
    cases, seen, problems = [], {}, []
    for path in paths:
        root = read_report(path)
        suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
        taken = set()
        for suite in suites:
            for case in suite.iter("testcase"):
                if id(case) in taken:
                    continue
                taken.add(id(case))
                key = (case.get("classname"), case.get("name"))
                if key in seen:
                    problems.append(("duplicate-case", "%s is in both %s and %s" % (key[1], seen[key], path)))
                seen[key] = path
                cases.append(case)
    if shards is not None and len(paths) != shards:
        problems.append(("missing-shard-report", "%d reports for %d shards: %s" % (len(paths), shards, " ".join(paths))))
    cases += [_error_case(name, message) for name, message in problems]
    count = lambda tag: sum(1 for c in cases if c.find(tag) is not None)
    seconds = sum(float(c.get("time", "0")) for c in cases)
    suite = ET.Element("testsuite", name="kvbench", tests=str(len(cases)), failures=str(count("failure")),
                       errors=str(count("error")), skipped=str(count("skipped")), time="%.3f" % seconds)
    suite.extend(cases)
    root = ET.Element("testsuites")
    root.append(suite)
    return root


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m kvbench.junit", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("merge", help="merge the JUnit reports of a sharded run into one")
    m.add_argument("reports", nargs="+", help="the shards' JUnit files")
    m.add_argument("-o", "--output", required=True, help="the merged report")
    m.add_argument("--shards", type=int, help="how many shards ran: another number of reports is an error case")
    args = parser.parse_args(argv)
    if args.shards is not None and args.shards < 1:
        parser.error("--shards takes a number >= 1")
    folder = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(folder):
        print("error: cannot write %s: the folder %s does not exist" % (args.output, folder), file=sys.stderr)
        return 2
    try:
        root = merge(args.reports, args.shards)
    except ReportError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    ET.indent(root)
    tmp = None
    try:
        with tempfile.NamedTemporaryFile("wb", dir=folder, delete=False, prefix=".merge-") as f:
            tmp = f.name
            ET.ElementTree(root).write(f, encoding="UTF-8", xml_declaration=True)
        os.chmod(tmp, 0o644)
        os.replace(tmp, args.output)
    except OSError as e:
        if tmp and os.path.exists(tmp):
            os.remove(tmp)
        print("error: cannot write %s: %s" % (args.output, e.strerror or e), file=sys.stderr)
        return 2
    suite = root[0]
    print("%s: %s test cases, %s failures, %s errors, %s skipped from %d reports" % (
        args.output, suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped"),
        len(args.reports)))
    return 1 if int(suite.get("failures")) or int(suite.get("errors")) else 0


if __name__ == "__main__":
    sys.exit(main())
