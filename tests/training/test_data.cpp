// The IDX reader: good files (gzip and plain), and each way a file can be
// bad gives an error naming the file and the problem, without crashing.
#include <gtest/gtest.h>
#include <zlib.h>

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "dnnt_checkpoint.h"
#include "dnnt_data.h"

namespace {

std::string tmpdir() {
  static std::string dir = [] {
    char tmpl[] = "/tmp/dnnt-data-XXXXXX";
    return std::string(mkdtemp(tmpl));
  }();
  return dir;
}

std::vector<unsigned char> idx_images(uint32_t n, uint32_t rows, uint32_t cols,
                                      uint32_t magic = 0x803) {
  std::vector<unsigned char> v;
  for (uint32_t x : {magic, n, rows, cols})
    for (int s = 24; s >= 0; s -= 8)
      v.push_back((unsigned char)(x >> s));
  for (uint32_t i = 0; i < n * rows * cols; ++i)
    v.push_back((unsigned char)(i * 7));
  return v;
}

std::vector<unsigned char> idx_labels(uint32_t n, int max_label = 9) {
  std::vector<unsigned char> v;
  for (uint32_t x : {0x801u, n})
    for (int s = 24; s >= 0; s -= 8)
      v.push_back((unsigned char)(x >> s));
  for (uint32_t i = 0; i < n; ++i)
    v.push_back((unsigned char)(i % (max_label + 1)));
  return v;
}

std::string write_gz(const std::string &name,
                     const std::vector<unsigned char> &bytes) {
  std::string path = tmpdir() + "/" + name;
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), (unsigned)bytes.size());
  gzclose(f);
  return path;
}

std::vector<char> read_all(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void write_all(const std::string &path, const std::vector<char> &b) {
  std::ofstream(path, std::ios::binary).write(b.data(), (long)b.size());
}

// The error of reading path as images (empty if it loaded).
std::string image_error(const std::string &path) {
  uint8_t *img = nullptr;
  long n = 0;
  int r = 0, c = 0;
  char err[1024] = "";
  if (dnnt_read_idx_images(path.c_str(), &img, &n, &r, &c, err, sizeof err) ==
      0) {
    free(img);
    return "";
  }
  EXPECT_EQ(img, nullptr);
  return err;
}

TEST(Idx, ReadsGzipAndPlainImages) {
  auto bytes = idx_images(20, 28, 28);
  std::string gz = write_gz("ok-images.gz", bytes), plain = tmpdir() + "/raw";
  write_all(plain, std::vector<char>(bytes.begin(), bytes.end()));
  for (const auto &path : {gz, plain}) {
    uint8_t *img = nullptr;
    long n = 0;
    int r = 0, c = 0;
    char err[256];
    ASSERT_EQ(
        dnnt_read_idx_images(path.c_str(), &img, &n, &r, &c, err, sizeof err),
        0)
        << err;
    EXPECT_EQ(n, 20);
    EXPECT_EQ(r, 28);
    EXPECT_EQ(c, 28);
    EXPECT_EQ(img[100], (uint8_t)(100 * 7));
    free(img);
  }
}

TEST(Idx, MissingFileNamesItAndThePackage) {
  std::string e = image_error(tmpdir() + "/nothing-here.gz");
  EXPECT_NE(e.find("nothing-here.gz: cannot open"), std::string::npos) << e;
  EXPECT_NE(e.find("dataset-fashion-mnist"), std::string::npos) << e;
}

TEST(Idx, TruncatedFile) {
  std::string path = write_gz("trunc.gz", idx_images(200, 28, 28));
  auto b = read_all(path);
  b.resize(b.size() / 2);
  write_all(path, b);
  std::string e = image_error(path);
  EXPECT_NE(e.find(path + ": truncated"), std::string::npos) << e;
}

TEST(Idx, TruncatedHeader) {
  std::string path = write_gz("short.gz", {0, 0, 8, 3, 0, 0});
  std::string e = image_error(path);
  EXPECT_NE(e.find("truncated: the IDX header"), std::string::npos) << e;
}

TEST(Idx, CorruptCompressedData) {
  std::string path = write_gz("corrupt.gz", idx_images(200, 28, 28));
  auto b = read_all(path);
  for (size_t i = b.size() / 3; i < b.size() / 3 + 64; ++i)
    b[i] = (char)(b[i] ^ 0x5a);
  write_all(path, b);
  std::string e = image_error(path);
  EXPECT_NE(e.find(path + ": corrupt gzip data"), std::string::npos) << e;
}

TEST(Idx, BadMagicDimensionsAndTrailingBytes) {
  std::string e = image_error(write_gz("magic.gz", idx_images(2, 4, 4, 0x801)));
  EXPECT_NE(e.find("not an IDX image file (magic 0x00000801"),
            std::string::npos)
      << e;
  e = image_error(write_gz("zero.gz", idx_images(0, 4, 4)));
  EXPECT_NE(e.find("implausible dimension 0"), std::string::npos) << e;
  auto extra = idx_images(2, 4, 4);
  extra.push_back(1);
  e = image_error(write_gz("extra.gz", extra));
  EXPECT_NE(e.find("unexpected bytes after the data"), std::string::npos) << e;
}

TEST(Idx, LabelsOutOfRangeAndCountMismatch) {
  std::string dir = tmpdir() + "/fm";
  mkdir(dir.c_str(), 0755);
  write_gz("fm/train-images-idx3-ubyte.gz", idx_images(30, 28, 28));
  write_gz("fm/train-labels-idx1-ubyte.gz", idx_labels(30, 12));
  dnnt_dataset d;
  char err[1024];
  ASSERT_NE(dnnt_load_fashion(dir.c_str(), "train", &d, err, sizeof err), 0);
  EXPECT_NE(std::string(err).find("label 10 of item 10 is out of range 0-9"),
            std::string::npos)
      << err;
  write_gz("fm/train-labels-idx1-ubyte.gz", idx_labels(29));
  ASSERT_NE(dnnt_load_fashion(dir.c_str(), "train", &d, err, sizeof err), 0);
  EXPECT_NE(std::string(err).find("has 30 images but"), std::string::npos)
      << err;
  write_gz("fm/train-labels-idx1-ubyte.gz", idx_labels(30));
  ASSERT_EQ(dnnt_load_fashion(dir.c_str(), "train", &d, err, sizeof err), 0)
      << err;
  EXPECT_EQ(d.count, 30);
  EXPECT_EQ(d.labels[13], 3);
  dnnt_dataset_free(&d);
}

TEST(Idx, RealFashionMnist) {
  dnnt_dataset d;
  char err[1024];
  if (dnnt_load_fashion(DNNT_FASHION_DIR, "t10k", &d, err, sizeof err))
    GTEST_SKIP() << "dataset-fashion-mnist not installed: " << err;
  EXPECT_EQ(d.count, 10000);
  EXPECT_EQ(d.h, 28);
  EXPECT_EQ(d.w, 28);
  std::vector<int> per(10);
  for (long i = 0; i < d.count; ++i)
    per[d.labels[i]]++;
  for (int k = 0; k < 10; ++k)
    EXPECT_EQ(per[k], 1000); // the test set is balanced
  dnnt_dataset_free(&d);
}

TEST(Checkpoint, RoundTripAndCorruption) {
  std::string path = tmpdir() + "/ck";
  std::vector<float> p = {1, 2, 3}, m = {4, 5, 6};
  char hist[] = "history";
  dnnt_checkpoint c = {};
  c.net_hash = 9, c.seed = 5, c.config = 77, c.epoch = 3, c.step = 300;
  c.nparams = 3, c.params = p.data(), c.momentum = m.data();
  c.history = hist, c.history_size = sizeof hist;
  char err[1024];
  ASSERT_EQ(dnnt_checkpoint_save(path.c_str(), &c, err, sizeof err), 0) << err;
  std::vector<float> p2(3), m2(3);
  dnnt_checkpoint d = {};
  d.net_hash = 9, d.nparams = 3, d.params = p2.data(), d.momentum = m2.data();
  ASSERT_EQ(dnnt_checkpoint_load(path.c_str(), &d, err, sizeof err), 0) << err;
  EXPECT_EQ(p2, p);
  EXPECT_EQ(m2, m);
  EXPECT_EQ(d.epoch, 3);
  EXPECT_EQ(d.step, 300u);
  EXPECT_EQ(d.config, 77u);
  EXPECT_STREQ((char *)d.history, "history");
  free(d.history);
  auto b = read_all(path);
  b[b.size() - 12] ^= 1;
  write_all(path, b);
  d.history = nullptr;
  EXPECT_NE(dnnt_checkpoint_load(path.c_str(), &d, err, sizeof err), 0);
  EXPECT_NE(std::string(err).find("checksum mismatch"), std::string::npos)
      << err;
  d.net_hash = 8;
  ASSERT_EQ(dnnt_checkpoint_save(path.c_str(), &c, err, sizeof err), 0);
  EXPECT_NE(dnnt_checkpoint_load(path.c_str(), &d, err, sizeof err), 0);
  EXPECT_NE(std::string(err).find("made for another network"),
            std::string::npos);
}

} // namespace
