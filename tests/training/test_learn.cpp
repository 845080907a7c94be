// A short training run that must learn: a small CNN on 2,000 Fashion-MNIST
// images (synthetic images if the package is missing) for two epochs.
#include <gtest/gtest.h>

#include <vector>

#include "dnnt.h"
#include "dnnt_data.h"

namespace {

TEST(Learn, SmallCnnLearnsFashionMnist) {
  dnnt_dataset train, test;
  char err[1024];
  bool real =
      dnnt_load_fashion(DNNT_FASHION_DIR, "train", &train, err, sizeof err) ==
          0 &&
      dnnt_load_fashion(DNNT_FASHION_DIR, "t10k", &test, err, sizeof err) == 0;
  if (!real) {
    dnnt_synthetic(2000, 1, 28, 28, 10, 3, &train);
    dnnt_synthetic(1000, 1, 28, 28, 10, 3, &test);
  }
  dnnt_dataset_truncate(&train, 2000);
  dnnt_dataset_truncate(&test, 1000);
  dnnt_net net;
  dnnt_net_init(&net, 1, 28, 28);
  dnnt_conv(&net, 8, 5, 1, 2);
  dnnt_relu(&net);
  dnnt_maxpool(&net, 2, 2);
  dnnt_fc(&net, 10);
  std::vector<float> p(net.nparams), v(net.nparams), g(net.nparams);
  dnnt_init_params(&net, 1, p.data());
  dnnk_augment_params norm;
  dnnk_augment_defaults(&norm, 28, 28);
  norm.mean[0] = 0.286f, norm.std[0] = 0.353f;
  std::vector<float> ws(dnnt_evaluate_workspace(&net, 100));
  dnnt_eval_result before =
      dnnt_evaluate(&net, p.data(), test.images, test.labels, test.count, 100,
                    &norm, ws.data());
  const int n = 32;
  dnnt_trainer t;
  ASSERT_EQ(dnnt_trainer_init(&t, &net, n), 0);
  dnnt_sgd o = {};
  o.lr = 0.05f, o.momentum = 0.9f, o.weight_decay = 5e-4f;
  std::vector<float> x(n * 784);
  double first_loss = 0, last_loss = 0;
  long steps = train.count / n;
  for (int e = 0; e < 2; ++e)
    for (long b = 0; b < steps; ++b) {
      dnnk_augment_batch(&norm, train.images + b * n * 784, DNNK_NCHW, n, 1, 28,
                         28, b * n, x.data());
      long c;
      float loss =
          dnnt_forward_train(&t, p.data(), x.data(), train.labels + b * n, n,
                             {1, (uint32_t)(e * steps + b), 0}, &c);
      dnnt_backward(&t, p.data(), train.labels + b * n, n, 1.0f, g.data(),
                    nullptr, nullptr);
      dnnt_sgd_step(&o, o.lr, p.data(), v.data(), g.data(), net.nparams);
      if (e == 0 && b < 5)
        first_loss += loss / 5;
      if (e == 1 && b >= steps - 5)
        last_loss += loss / 5;
    }
  dnnt_eval_result after =
      dnnt_evaluate(&net, p.data(), test.images, test.labels, test.count, 100,
                    &norm, ws.data());
  double acc = (double)after.correct / after.count;
  EXPECT_LT((double)before.correct / before.count, 0.3);
  EXPECT_GT(acc, real ? 0.72 : 0.9) << (real ? "Fashion-MNIST" : "synthetic");
  EXPECT_LT(last_loss, 0.6 * first_loss);
  EXPECT_LT(after.loss_sum / after.count, before.loss_sum / before.count);
  dnnt_trainer_free(&t);
  dnnt_dataset_free(&train);
  dnnt_dataset_free(&test);
}

} // namespace
