"""Merge the JUnit reports of a sharded kvbench job into one (the README's shard matrix):

    python3 -m kvbench.junit merge --shards 4 -o kvbench.xml kvbench-1.xml ... kvbench-4.xml

Every test case of every report lands in one <testsuite name="kvbench"> whose counts are the
sums. Nothing is lost in silence: with --shards N, fewer or more reports than N add an error
test case (a shard whose job died wrote none), and so does a case name that two reports hold
(shards that overlap). The output is written whole or not at all. Standard library only.
"""
import argparse
import os
import sys
import tempfile
import xml.etree.ElementTree as ET


def _error_case(name, message):
    case = ET.Element("testcase", classname="kvbench-merge", name=name, time="0.000")
    ET.SubElement(case, "error", message=message).text = message
    return case


def merge(paths, shards=None):
    """The merged <testsuites> element of the reports at `paths`."""
    cases, seen, problems = [], {}, []
    for path in paths:
        root = ET.parse(path).getroot()
        suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
        for suite in suites:
            for case in suite.findall("testcase"):
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
    root = merge(args.reports, args.shards)
    ET.indent(root)
    folder = os.path.dirname(os.path.abspath(args.output))
    with tempfile.NamedTemporaryFile("wb", dir=folder, delete=False) as f:
        ET.ElementTree(root).write(f, encoding="UTF-8", xml_declaration=True)
    os.chmod(f.name, 0o644)
    os.replace(f.name, args.output)
    suite = root[0]
    print("%s: %s test cases, %s failures, %s errors, %s skipped from %d reports" % (
        args.output, suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped"),
        len(args.reports)))
    return 1 if int(suite.get("failures")) or int(suite.get("errors")) else 0


if __name__ == "__main__":
    sys.exit(main())
