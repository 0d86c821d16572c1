#pragma once
// The interface every operator implements, and the registry that finds them by id.
// Adding an operator = one folder in src/ops/ and one line in registry.cpp.
#include <memory>
#include <string>
#include <vector>

#include "cases/case_def.hpp"
#include "check/expected.hpp"
#include "core/tensor.hpp"

namespace kvbench {

class Runtime;

// A named list of tensors: the inputs, outputs and in-place tensors of one case.
class TensorSet {
 public:
  std::vector<Tensor> tensors;
  Tensor& at(const std::string& name);
  const Tensor& at(const std::string& name) const;
  bool has(const std::string& name) const;
};

// Extra figures an operator reports for a case (label, value), e.g. a compression ratio.
using CaseFigures = std::vector<std::pair<std::string, std::string>>;

// One validated, expanded case of an operator.
class OpCase {
 public:
  virtual ~OpCase() = default;
  // A one-line summary of the case's parameters (for `kvbench list`).
  virtual std::string describe() const = 0;
  // Every tensor with its role; inputs and in-place tensors filled by the generator,
  // outputs zeroed (they are poisoned before the dispatch).
  virtual TensorSet make_tensors() const = 0;
  // The golden outputs, computed in double from the inputs only.
  virtual std::vector<Expected> reference(const TensorSet& inputs) const = 0;
  // Runs the Vulkan implementation on `io` (uploads, dispatches, downloads outputs and
  // in-place tensors into `io`). Returns the device time in ms. May throw SkipCase.
  virtual double run_vulkan(Runtime& rt, TensorSet& io) const = 0;
  // Extra report figures; available after reference() (which may compute them).
  virtual CaseFigures figures() const { return {}; }
  // Bytes the operator must move at least (read + written), counted from the shapes, for
  // the effective bandwidth of `kvbench bench`. The default counts every input and output
  // tensor once and every in-place tensor twice (read and written); operators that touch
  // only part of a tensor (a cache) override it with the exact count.
  virtual double traffic_bytes(const TensorSet& io) const;
};

class Operator {
 public:
  virtual ~Operator() = default;
  virtual std::string id() const = 0;
  // Parses and checks the case against the operator's constraints; throws CaseError
  // naming the field at fault.
  virtual std::unique_ptr<OpCase> instantiate(const CaseDef& c) const = 0;
};

const Operator* find_operator(const std::string& id);
std::vector<std::string> operator_ids();

}  // namespace kvbench
