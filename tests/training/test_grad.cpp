// Gradients of dnnt's training passes against central finite differences,
// through every layer kind (conv, ReLU, max-pool, fc, dropout, skip/add),
// and the optimizer and schedule against their formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../../training/src/internal.h"
#include "dnnt.h"

namespace {

std::vector<float> inputs(long n, uint32_t seed) {
  std::vector<float> v(n);
  for (long i = 0; i < n; ++i)
    v[i] = (float)(dnnk_philox(seed, 1, (uint64_t)i, 0, 0) % 2001) / 1000.0f -
           1.0f;
  return v;
}

// Mean loss of the batch at params p (dropout masks fixed by the key).
double loss_at(dnnt_trainer &t, const std::vector<float> &p,
               const std::vector<float> &x, const std::vector<int32_t> &y,
               int n, dnnt_batch_key key) {
  long correct;
  return dnnt_forward_train(&t, p.data(), x.data(), y.data(), n, key, &correct);
}

// Compares dnnt_backward's gradient with finite differences on up to
// `probes` parameters of every layer that has any.
void check_gradients(const dnnt_net &net, int n, int probes) {
  char err[256];
  ASSERT_EQ(dnnt_net_check(&net, err, sizeof err), 0) << err;
  std::vector<float> p(net.nparams), g(net.nparams);
  dnnt_init_params(&net, 7, p.data());
  for (long i = 0; i < net.nparams; ++i) // nonzero biases too
    p[i] += 0.01f * (float)((i * 37) % 11 - 5);
  long in = (long)net.in_c * net.in_h * net.in_w;
  auto x = inputs(n * in, 3);
  std::vector<int32_t> y(n);
  for (int b = 0; b < n; ++b)
    y[b] = b % dnnt_classes(&net);
  dnnt_trainer t;
  ASSERT_EQ(dnnt_trainer_init(&t, &net, n), 0);
  dnnt_batch_key key = {11, 3, 0};
  loss_at(t, p, x, y, n, key);
  dnnt_backward(&t, p.data(), y.data(), n, 1.0f, g.data(), nullptr, nullptr);
  int checked = 0, kinks = 0;
  for (int li = 0; li < net.nlayers; ++li) {
    const dnnt_layer &l = net.layer[li];
    long count = l.wcount + l.bcount;
    for (int k = 0; k < probes && count; ++k) {
      long j = l.woff + (long)(dnnk_philox(5, li, k, 0, 0) % count);
      float keep = p[j];
      double num[2];
      for (int q = 0; q < 2; ++q) {
        float h = q ? 1e-3f : 2e-3f;
        p[j] = keep + h;
        double up = loss_at(t, p, x, y, n, key);
        p[j] = keep - h;
        double down = loss_at(t, p, x, y, n, key);
        p[j] = keep;
        num[q] = (up - down) / (2.0 * h);
      }
      // Two step sizes that disagree: a ReLU or max-pool kink lies within
      // reach, where differences say nothing about the gradient.
      if (std::fabs(num[0] - num[1]) > 1e-3 + 5e-2 * std::fabs(num[1])) {
        ++kinks;
        continue;
      }
      EXPECT_NEAR(g[j], num[1], 2e-3 + 2e-2 * std::fabs(num[1]))
          << "layer " << li << " parameter " << j - l.woff;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
  EXPECT_LE(kinks, checked / 4) << "too many probes near kinks";
  dnnt_trainer_free(&t);
}

TEST(Gradients, ConvPoolFcDropout) {
  dnnt_net net;
  dnnt_net_init(&net, 2, 8, 8);
  dnnt_conv(&net, 3, 3, 1, 1);
  dnnt_relu(&net);
  dnnt_maxpool(&net, 2, 2);
  dnnt_conv(&net, 4, 3, 2, 1);
  dnnt_relu(&net);
  dnnt_fc(&net, 6);
  dnnt_relu(&net);
  dnnt_dropout(&net, 0.3f);
  dnnt_fc(&net, 5);
  check_gradients(net, 4, 6);
}

TEST(Gradients, ResidualBlock) {
  dnnt_net net;
  dnnt_net_init(&net, 3, 6, 6);
  dnnt_conv(&net, 4, 3, 1, 1);
  int s = dnnt_skip(&net);
  dnnt_conv(&net, 4, 3, 1, 1);
  dnnt_relu(&net);
  dnnt_conv(&net, 4, 3, 1, 1);
  ASSERT_GE(dnnt_add(&net, s), 0);
  dnnt_relu(&net);
  dnnt_fc(&net, 3);
  check_gradients(net, 3, 8);
}

TEST(Gradients, ConvInChunks) {
  // Lowered columns of 1.6M floats per image: one image per conv call, the
  // weight gradients summed over the chunks.
  dnnt_net net;
  dnnt_net_init(&net, 16, 64, 64);
  dnnt_conv(&net, 2, 5, 1, 2); // no ReLU: thousands of kinks otherwise
  dnnt_fc(&net, 3);
  ASSERT_EQ(dnnt_conv_chunk(&net.layer[0], 3), 1);
  check_gradients(net, 3, 12);
}

TEST(Gradients, LossScaleMakesRankSumsTheGlobalMean) {
  // Two half batches with loss_scale 1/2 sum to the full batch's gradient.
  dnnt_net net;
  dnnt_net_init(&net, 1, 5, 5);
  dnnt_conv(&net, 2, 3, 1, 0);
  dnnt_relu(&net);
  dnnt_fc(&net, 3);
  std::vector<float> p(net.nparams), full(net.nparams), a(net.nparams),
      b(net.nparams);
  dnnt_init_params(&net, 2, p.data());
  auto x = inputs(4 * 25, 9);
  std::vector<int32_t> y = {0, 1, 2, 1};
  dnnt_trainer t;
  ASSERT_EQ(dnnt_trainer_init(&t, &net, 4), 0);
  long c;
  dnnt_forward_train(&t, p.data(), x.data(), y.data(), 4, {1, 0, 0}, &c);
  dnnt_backward(&t, p.data(), y.data(), 4, 1.0f, full.data(), nullptr, nullptr);
  dnnt_forward_train(&t, p.data(), x.data(), y.data(), 2, {1, 0, 0}, &c);
  dnnt_backward(&t, p.data(), y.data(), 2, 0.5f, a.data(), nullptr, nullptr);
  dnnt_forward_train(&t, p.data(), x.data() + 50, y.data() + 2, 2, {1, 0, 2},
                     &c);
  dnnt_backward(&t, p.data(), y.data() + 2, 2, 0.5f, b.data(), nullptr,
                nullptr);
  for (long i = 0; i < net.nparams; ++i)
    EXPECT_NEAR(a[i] + b[i], full[i], 1e-5f + 1e-4f * std::fabs(full[i]));
  dnnt_trainer_free(&t);
}

TEST(Network, ShapesAndErrors) {
  dnnt_net net;
  dnnt_reference_cnn(&net);
  char err[256];
  EXPECT_EQ(dnnt_net_check(&net, err, sizeof err), 0);
  EXPECT_EQ(net.nparams, 832 + 51264 + 803072 + 2570);
  EXPECT_EQ(dnnt_classes(&net), 10);
  dnnt_small_resnet(&net, 10);
  EXPECT_EQ(dnnt_net_check(&net, err, sizeof err), 0);
  dnnt_net bad;
  dnnt_net_init(&bad, 1, 4, 4);
  dnnt_conv(&bad, 2, 7, 1, 0); // kernel larger than the image
  dnnt_fc(&bad, 2);
  EXPECT_NE(dnnt_net_check(&bad, err, sizeof err), 0);
  dnnt_net_init(&bad, 1, 4, 4);
  int s = dnnt_skip(&bad);
  dnnt_conv(&bad, 3, 3, 1, 1); // 3 channels cannot add to 1
  EXPECT_LT(dnnt_add(&bad, s), 0);
}

TEST(Network, EvaluationMatchesTrainingForwardWithoutDropout) {
  dnnt_net net;
  dnnt_net_init(&net, 1, 6, 6);
  dnnt_conv(&net, 2, 3, 1, 1);
  dnnt_relu(&net);
  dnnt_maxpool(&net, 2, 2);
  dnnt_fc(&net, 4);
  std::vector<float> p(net.nparams);
  dnnt_init_params(&net, 4, p.data());
  auto x = inputs(3 * 36, 1);
  std::vector<float> logits(3 * 4), ws(dnnt_eval_workspace(&net, 3));
  dnnt_forward_eval(&net, p.data(), x.data(), 3, logits.data(), ws.data());
  dnnt_trainer t;
  ASSERT_EQ(dnnt_trainer_init(&t, &net, 3), 0);
  std::vector<int32_t> y = {0, 1, 2};
  long c;
  dnnt_forward_train(&t, p.data(), x.data(), y.data(), 3, {1, 0, 0}, &c);
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(logits[i], t.act[net.nlayers][i]);
  dnnt_trainer_free(&t);
}

TEST(Init, SeededAndBounded) {
  dnnt_net net;
  dnnt_reference_cnn(&net);
  std::vector<float> a(net.nparams), b(net.nparams), c(net.nparams);
  dnnt_init_params(&net, 1, a.data());
  dnnt_init_params(&net, 1, b.data());
  dnnt_init_params(&net, 2, c.data());
  EXPECT_EQ(dnnt_hash(a.data(), net.nparams), dnnt_hash(b.data(), net.nparams));
  EXPECT_NE(dnnt_hash(a.data(), net.nparams), dnnt_hash(c.data(), net.nparams));
  const dnnt_layer &fc = net.layer[6];
  float bound = std::sqrt(6.0f / 3136.0f);
  double sum = 0;
  for (long i = 0; i < fc.wcount; ++i) {
    ASSERT_LE(std::fabs(a[fc.woff + i]), bound);
    sum += a[fc.woff + i];
  }
  EXPECT_NEAR(sum / fc.wcount, 0.0, 0.01 * bound);
  for (long i = 0; i < fc.bcount; ++i)
    EXPECT_EQ(a[fc.boff + i], 0.0f);
}

TEST(Optimizer, SgdMomentumWeightDecay) {
  dnnt_sgd o = {};
  o.lr = 0.1f, o.momentum = 0.9f, o.weight_decay = 0.01f;
  float w[2] = {1.0f, -2.0f}, v[2] = {0.5f, 0.0f}, g[2] = {0.2f, 0.4f};
  dnnt_sgd_step(&o, 0.1f, w, v, g, 2);
  float v0 = 0.9f * 0.5f + (0.2f + 0.01f * 1.0f);
  EXPECT_FLOAT_EQ(v[0], v0);
  EXPECT_FLOAT_EQ(w[0], 1.0f - 0.1f * v0);
  float v1 = 0.4f + 0.01f * -2.0f;
  EXPECT_FLOAT_EQ(w[1], -2.0f - 0.1f * v1);
}

TEST(Optimizer, Schedules) {
  dnnt_sgd o = {};
  o.lr = 0.02f;
  o.schedule = DNNT_LR_COSINE, o.epochs = 10;
  EXPECT_FLOAT_EQ(dnnt_lr_at(&o, 0), 0.02f);
  EXPECT_FLOAT_EQ(dnnt_lr_at(&o, 5), 0.01f);
  EXPECT_NEAR(dnnt_lr_at(&o, 10), 0.0f, 1e-9);
  o.schedule = DNNT_LR_STEP, o.step_epochs = 3, o.gamma = 0.5f;
  EXPECT_FLOAT_EQ(dnnt_lr_at(&o, 2.9), 0.02f);
  EXPECT_FLOAT_EQ(dnnt_lr_at(&o, 3), 0.01f);
  o.schedule = DNNT_LR_CONSTANT, o.warmup_epochs = 2;
  EXPECT_FLOAT_EQ(dnnt_lr_at(&o, 0), 0.002f);
  EXPECT_FLOAT_EQ(dnnt_lr_at(&o, 1), 0.011f);
  EXPECT_FLOAT_EQ(dnnt_lr_at(&o, 2), 0.02f);
}

} // namespace
