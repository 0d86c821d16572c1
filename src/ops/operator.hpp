#pragma once
// The interface every operator implements, and the registry that finds them by id.
// Adding an operator = one folder in src/ops/ and one line in registry.cpp.
//
// The generic path owns the mechanical phases of every case: the operator's declared
// Signature parses the case file (Args), tensor_specs() gives every tensor's dtype and
// shape before any data exists (so size and device checks come before the reference),
// make_tensors() allocates and fills them, golden() attaches tolerances. An operator keeps
// only what is its own: constraints (instantiate), special inputs (fill), the reference
// and the kernel plan.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "check/expected.hpp"
#include "core/tensor.hpp"
#include "ops/args.hpp"
#include "ops/signature.hpp"

namespace kvbench {

class Runtime;
struct DeviceInfo;

// A named list of tensors: the inputs, outputs and in-place tensors of one case.
class TensorSet {
 public:
  std::vector<Tensor> tensors;
  Tensor& at(const std::string& name);
  const Tensor& at(const std::string& name) const;
  bool has(const std::string& name) const;
};

// Whether make_tensors allocates the outputs (a run's device writes them; a golden's
// come from the reference alone).
enum class OutputData { allocated, none };

// A tensor of one case, before it holds data.
struct TensorSpec {
  std::string name;
  DType dtype;
  Shape shape;
};

// One validated, expanded case of an operator.
class OpCase {
 public:
  explicit OpCase(Args args) : args_(std::move(args)) {}
  virtual ~OpCase() = default;
  const Args& args() const { return args_; }

  // A one-line summary of the case's parameters.
  virtual std::string describe() const = 0;
  // describe() and the inputs taken from files, with their NaN and Inf (for `kvbench list`
  // and the golden's manifest).
  std::string description() const { return describe() + describe_file_inputs(file_inputs_); }
  // Every tensor this case has (absent optional tensors left out), roles as declared.
  virtual std::vector<TensorSpec> tensor_specs() const = 0;
  // Fills an input or in-place tensor. The default draws each element uniformly from the
  // tensor's generator range; operators override it for index tensors, caches, masks.
  virtual void fill(Tensor& t) const;
  // Fills every input and in-place tensor of `ts` that no file gives: fill() on each, unless
  // an operator makes several in one pass (FIA: a side's codes with their scales).
  virtual void fill_generated(TensorSet& ts) const;
  // The spec's tolerance for an output (exact by default); a case file may override it. One
  // that depends on the data is the reference's instead (Expected::data_tolerance).
  virtual Tolerance default_tolerance(const std::string& /*output*/) const { return {}; }
  // The golden outputs, computed in double from the inputs only.
  virtual std::vector<Expected> reference(const TensorSet& inputs) const = 0;
  // Throws SkipCase when the kernel cannot run on this device (features, limits).
  virtual void check_device(const DeviceInfo& /*dev*/) const {}
  // Runs the Vulkan implementation on `io` (uploads, dispatches, downloads outputs and
  // in-place tensors into `io`). Returns the device time in ms. May throw SkipCase.
  virtual double run_vulkan(Runtime& rt, TensorSet& io) const = 0;
  // Extra report figures decided by the shapes alone (figures measured on the data come
  // with the reference's outputs: Expected::figures).
  virtual CaseFigures figures() const { return {}; }
  // A golden file has no place for figures, and some cost a second reference (FIA's and
  // SDPA's quant_err: the attention again on the unquantized K/V): `golden` turns them off.
  void skip_figures() { figures_wanted_ = false; }
  // Threads of this case's input filling and reference (Args::set_threads).
  void set_threads(unsigned n) { args_.set_threads(n); }
  // Plants fault `name` (one of the signature's faults) in reference(): the golden a
  // kernel with that bug would agree with (`kvbench coverage --faults`). Empty: none.
  void set_fault(std::string name) { fault_ = std::move(name); }
  const std::string& fault() const { return fault_; }
  bool fault_is(const char* name) const { return fault_ == name; }
  // Computes reference() as permitted implementation `name` (one of the signature's
  // variants) would (`kvbench coverage --variants`). Empty: the golden.
  void set_variant(std::string name) { variant_ = std::move(name); }
  const std::string& variant() const { return variant_; }
  bool variant_is(const char* name) const { return variant_ == name; }
  // Bytes the operator must move at least (read + written), counted from the shapes, for
  // the effective bandwidth of `kvbench bench`. The default counts every input and output
  // tensor once and every in-place tensor twice (read and written); operators that touch
  // only part of a tensor (a cache) override it with the exact count.
  virtual double traffic_bytes(const TensorSet& io) const;
  // Floating-point operations the definition performs, counted from the shapes, for the
  // GFLOPS of `kvbench bench`; 0 where not counted. Attention counts 2 * (Dk + Dv) per
  // visible (query row, key, head): the q.k and p.v multiply-adds, not the softmax.
  virtual double flops() const { return 0; }
  // Elements of in-place tensor `spec` the operator writes at most, counted from the
  // shapes (its golden holds a record of each): all of them unless the operator says. In
  // floating point: a product of a hostile case's sizes may exceed 2^64.
  virtual long double written_elements(const TensorSpec& spec) const {
    return static_cast<long double>(shape_numel(spec.shape));
  }

  // ---- generic, from the declaration ----
  Role role(const std::string& tensor) const;
  // Every tensor; inputs and in-place tensors filled (from their files where the case file
  // names one), outputs zeroed (or, with OutputData::none, described but not allocated).
  TensorSet make_tensors(OutputData outputs = OutputData::allocated) const;
  // The inputs taken from files, checked against this case (instantiate_case sets them).
  const std::vector<FileInput>& file_inputs() const { return file_inputs_; }
  const FileInput* file_input(const std::string& tensor) const;
  // Whether the tensor comes from the generator (not from a file): figures that compare
  // with the values its codes were drawn from (quant_err) need it.
  bool generated(const std::string& tensor) const { return file_input(tensor) == nullptr; }
  void set_file_inputs(std::vector<FileInput> files) { file_inputs_ = std::move(files); }
  // reference() with every output's tolerance attached (the case's override, else the
  // spec's default) and checked against the declaration.
  std::vector<Expected> golden(const TensorSet& inputs) const;
  // Why the case cannot run on `dev`, decided from the shapes alone (no data yet): a
  // tensor over the device's storage-buffer range or 2^32 elements, or check_device().
  std::optional<std::string> skip_reason(const DeviceInfo& dev) const;
  // The resolved attributes/shapes/inputs and every tensor's dtype: what the case ran.
  nlohmann::json resolved() const;

 protected:
  // For fill(): a uniform tensor over `range`, keyed by (seed, tensor name, index).
  void fill_uniform(Tensor& t, std::pair<double, double> range) const;
  // Elements [0, numel) as value(i), made in chunks on the reference threads (value must
  // depend on i alone, so the bytes do not depend on the threads).
  void fill_with(Tensor& t, const std::function<double(size_t)>& value) const;
  // An index tensor holding `values`.
  static void fill_values(Tensor& t, const std::vector<int64_t>& values);
  // Whether reference() should measure its outputs' figures (false after skip_figures()).
  bool figures_wanted() const { return figures_wanted_; }

 private:
  Args args_;
  bool figures_wanted_ = true;
  std::string fault_;
  std::string variant_;
  std::vector<FileInput> file_inputs_;
};

class Operator {
 public:
  virtual ~Operator() = default;
  virtual const Signature& signature() const = 0;
  std::string id() const { return signature().id; }
  // Checks the parsed case against the operator's own constraints (throws CaseError
  // through Args::fail naming the field) and builds the case.
  virtual std::unique_ptr<OpCase> instantiate(Args args) const = 0;
};

// Parses `def` against the operator's signature and instantiates it. Whatever goes wrong
// (a CaseError, or any other exception) comes back as a CaseError naming the field, or
// the whole document ("") when no field is known.
std::unique_ptr<OpCase> instantiate_case(const Operator& op, const CaseDef& def, const RunOptions& options);

// The host memory a case may take (its tensors, their working copies and the goldens of
// its outputs), as instantiate_case checked it against --memory-budget: what `golden
// --jobs` schedules by.
uint64_t host_bytes(const OpCase& c);
// The bytes per element an in-place tensor takes besides the records of the elements
// written (initial, working and golden copies): for the checks of an operator that
// allocates while it is instantiated.
uint64_t inplace_host_bytes_each(DType dtype);

const Operator* find_operator(const std::string& id);
std::vector<std::string> operator_ids();
std::vector<const Operator*> operators();

}  // namespace kvbench
