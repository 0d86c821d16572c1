#pragma once
// JUnit XML for CI systems (GitLab, Jenkins): one <testcase> per case (classname = operator
// id, time in seconds), failures with their figures, tolerances, worst elements and repro
// line, skips with their reason, invalid case files as <error> test cases; messages in the
// element text as well as the `message` attribute, since viewers show one or the other.
// Only the elements and attributes of the Jenkins JUnit schema (tests/data/junit.xsd).
#include <string>
#include <vector>

#include "cases/case_loader.hpp"
#include "runner/case_result.hpp"

namespace kvbench {

// `s` as XML 1.0 character data (attribute values too): markup characters as entities, and
// what XML 1.0 cannot hold (control characters, bytes that are not UTF-8, U+FFFE/U+FFFF)
// as the visible text \xNN, one per byte. In an attribute, tab and line ends become
// character references so that parsers keep them.
std::string xml_escape(const std::string& s, bool attribute);

std::string junit_xml(const std::vector<CaseResult>& results, const std::vector<CaseFileError>& invalid,
                      const std::vector<std::string>& repro);

// The report a run writes before its first case, replaced when it finishes: one test case
// in error saying the run did not finish, so a killed run never shows as a pass.
std::string junit_incomplete_xml();

}  // namespace kvbench
