// The convolution layers benchmarked, and the GEMMs they lower to.
#ifndef DNNK_BENCH_LAYERS_H
#define DNNK_BENCH_LAYERS_H

#include <string>
#include <vector>

#include "dnnk.h"

namespace bench {

// A named layer shape.
struct Layer {
  std::string name; // shape, for the convolution table
  std::string tag;  // short name, for the GEMM table
  dnnk_conv_desc d;
};

// LeNet-5 (MNIST, batch 64), a CIFAR ResNet block (3x3 convolutions, a
// stride-2 downsampling 3x3 and its 1x1 projection shortcut) and the two
// convolutions of the training library's reference CNN (Fashion-MNIST).
std::vector<Layer> bench_layers(bool quick);

// One GEMM problem: row-major m x n x k with operand transposes.
struct GemmShape {
  std::string name;
  int m, n, k;
  bool ta, tb;
};

// Square sizes plus the GEMMs of each layer's three passes.
std::vector<GemmShape> gemm_shapes(bool quick);

} // namespace bench

#endif // DNNK_BENCH_LAYERS_H
