// The shaders' dtype codes are the C++ table's: shaders/storage.glsl includes the file the
// build writes from src/core/dtype.cpp (tools/dtype_codes_glsl.cpp), and no shader keeps a
// copy of its own.
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/dtype.hpp"

using namespace kvbench;

namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("GLSL dtype codes: the generated include holds every dtype's code from the C++ table") {
  const std::string glsl = read_text(KVBENCH_DTYPE_CODES_GLSL);
  REQUIRE(!glsl.empty());
  size_t constants = 0;
  for (size_t at = glsl.find("const uint DT_"); at != std::string::npos;
       at = glsl.find("const uint DT_", at + 1))
    ++constants;
  CHECK(constants == all_dtypes().size());
  for (const DType t : all_dtypes()) {
    std::string name(dtype_name(t));
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const std::string line = "const uint DT_" + name + " = " + std::to_string(static_cast<int>(t)) + "u;\n";
    CHECK_MESSAGE(glsl.find(line) != std::string::npos, line);
  }
}

TEST_CASE("GLSL dtype codes: no shader defines one by hand") {
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(KVBENCH_SOURCE_DIR) / "shaders"))
    CHECK_MESSAGE(read_text(entry.path()).find("const uint DT_") == std::string::npos, entry.path().string());
}
