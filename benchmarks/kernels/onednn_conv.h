// A convolution layer in oneDNN, forward and both backward passes, either on
// the plain NCHW/OIHW layouts dnnk uses or on oneDNN's preferred (blocked)
// layouts with the reorders left out of the timing.
#ifndef DNNK_BENCH_ONEDNN_CONV_H
#define DNNK_BENCH_ONEDNN_CONV_H

#include <memory>
#include <string>

#include "dnnk.h"

namespace bench {

// Three primitives and their memories for one layer shape.
class OnednnConv {
public:
  // Builds the primitives; blocked selects format_tag::any layouts.
  OnednnConv(const dnnk_conv_desc &d, bool blocked);
  ~OnednnConv();
  // Runs the forward pass (with bias) and waits for it.
  void forward();
  // Runs the backward-data pass and waits for it.
  void backward_data();
  // Runs the backward-weights pass (with bias gradient) and waits for it.
  void backward_weights();
  // oneDNN's implementation names, "fwd / bwd-data / bwd-wt".
  std::string impl() const;

private:
  struct State;
  std::unique_ptr<State> s_;
};

} // namespace bench

#endif // DNNK_BENCH_ONEDNN_CONV_H
