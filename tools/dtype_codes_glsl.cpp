// Writes the GLSL dtype codes (`const uint DT_F32 = 0u;` ...) from the C++ table of
// src/core/dtype.cpp, so that shaders/storage.glsl includes them instead of a copy by hand.
// Run at build time: dtype_codes_glsl OUT.glsl (the file is rewritten only when it changes,
// so the shaders are recompiled only then).
#include <cctype>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "core/dtype.hpp"

namespace {

std::string glsl_name(std::string_view dtype) {
  std::string name = "DT_";
  for (char c : dtype) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: dtype_codes_glsl OUT.glsl\n";
    return 2;
  }
  std::ostringstream text;
  text << "// Generated at build time by tools/dtype_codes_glsl.cpp from src/core/dtype.cpp: the\n"
          "// code of each kvbench dtype (enum class DType), as the kernels' dtype parameters hold it.\n";
  for (const kvbench::DType dtype : kvbench::all_dtypes())
    text << "const uint " << glsl_name(kvbench::dtype_name(dtype)) << " = " << static_cast<int>(dtype)
         << "u;\n";
  std::ifstream old(argv[1]);
  std::ostringstream old_text;
  old_text << old.rdbuf();
  if (old && old_text.str() == text.str()) return 0;
  std::ofstream out(argv[1], std::ios::trunc);
  out << text.str();
  return out ? 0 : 1;
}
