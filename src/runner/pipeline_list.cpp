#include "runner/pipeline_list.hpp"

#include <set>
#include <string>

#include "core/error.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

size_t list_pipelines(Runtime& rt, const Selection& sel, std::ostream& out) {
  rt.plan_only(true);
  size_t errors = 0;
  for (const auto& c : sel.cases) {
    out << c.def.name << "  ";
    if (auto reason = c.op->skip_reason(rt.info())) {
      out << "skipped: " << *reason << "\n";
      continue;
    }
    try {
      TensorSet io = c.op->make_tensors();
      c.op->run_vulkan(rt, io);
    } catch (const SkipCase& skip) {
      out << "skipped: " << skip.what() << "\n";
      rt.take_pipeline_log();
      rt.take_scratch_bytes();
      continue;
    } catch (const std::exception& e) {  // named, as `run` reports it; the next case is listed
      out << "error: " << e.what() << "\n";
      rt.take_pipeline_log();
      rt.take_scratch_bytes();
      ++errors;
      continue;
    }
    std::set<std::string> seen;
    out << "pipelines:";
    for (const auto& key : rt.take_pipeline_log())
      if (seen.insert(key).second) out << " " << key;
    if (const uint64_t scratch = rt.take_scratch_bytes()) out << "  scratch: " << scratch << " bytes";
    out << "\n";
  }
  rt.plan_only(false);
  return errors;
}

}  // namespace kvbench
