#include "ember/frontend/data.h"

#include <fstream>

#include "ember/ops/random.h"

namespace torch::data {

namespace datasets {
namespace {

constexpr uint32_t kImageMagic = 2051, kTargetMagic = 2049;
constexpr int64_t kTrainSize = 60000, kTestSize = 10000, kRows = 28, kCols = 28;

uint32_t read_be32(std::ifstream& in, const std::string& path) {
  unsigned char b[4];
  in.read(reinterpret_cast<char*>(b), 4);
  EMBER_CHECK(in.good(), "Error reading the header of ", path);
  return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | uint32_t(b[3]);
}

void expect(std::ifstream& in, uint32_t want, const std::string& path, const char* what) {
  uint32_t got = read_be32(in, path);
  EMBER_CHECK(got == want, "Expected ", what, " ", want, " in ", path, " but got ", got);
}

std::string join(const std::string& root, const char* name) {
  return root.empty() || root.back() == '/' ? root + name : root + "/" + name;
}

at::Tensor read_images(const std::string& root, bool train) {
  std::string path = join(root, train ? "train-images-idx3-ubyte" : "t10k-images-idx3-ubyte");
  std::ifstream in(path, std::ios::binary);
  EMBER_CHECK(in, "Error opening images file at ", path);
  int64_t count = train ? kTrainSize : kTestSize;
  expect(in, kImageMagic, path, "the image magic number");
  expect(in, static_cast<uint32_t>(count), path, "the image count");
  expect(in, kRows, path, "the row count");
  expect(in, kCols, path, "the column count");
  at::Tensor bytes = at::empty({count, 1, kRows, kCols}, at::kByte);
  in.read(reinterpret_cast<char*>(bytes.data_ptr<uint8_t>()), static_cast<std::streamsize>(bytes.numel()));
  EMBER_CHECK(in.good(), "Error reading the images of ", path, " (file too short)");
  return bytes.to(at::kFloat).div_(255);
}

at::Tensor read_targets(const std::string& root, bool train) {
  std::string path = join(root, train ? "train-labels-idx1-ubyte" : "t10k-labels-idx1-ubyte");
  std::ifstream in(path, std::ios::binary);
  EMBER_CHECK(in, "Error opening targets file at ", path);
  int64_t count = train ? kTrainSize : kTestSize;
  expect(in, kTargetMagic, path, "the label magic number");
  expect(in, static_cast<uint32_t>(count), path, "the label count");
  at::Tensor bytes = at::empty({count}, at::kByte);
  in.read(reinterpret_cast<char*>(bytes.data_ptr<uint8_t>()), static_cast<std::streamsize>(count));
  EMBER_CHECK(in.good(), "Error reading the labels of ", path, " (file too short)");
  return bytes.to(at::kLong);
}

}  // namespace

MNIST::MNIST(const std::string& root, Mode mode)
    : images_(read_images(root, mode == Mode::kTrain)), targets_(read_targets(root, mode == Mode::kTrain)) {}

Example<> MNIST::get(size_t index) {
  int64_t i = static_cast<int64_t>(index);
  return {images_[i], targets_[i]};
}

std::optional<size_t> MNIST::size() const { return static_cast<size_t>(images_.size(0)); }
bool MNIST::is_train() const noexcept { return images_.size(0) == kTrainSize; }
const at::Tensor& MNIST::images() const { return images_; }
const at::Tensor& MNIST::targets() const { return targets_; }

}  // namespace datasets

namespace samplers {

void SequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}

std::optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  size_t remaining = size_ - index_;
  if (remaining == 0) return std::nullopt;
  std::vector<size_t> r(std::min(batch_size, remaining));
  for (size_t& i : r) i = index_++;
  return r;
}

RandomSampler::RandomSampler(int64_t size, at::ScalarType index_dtype) : indices_(at::randperm(size, index_dtype)) {}

void RandomSampler::reset(std::optional<size_t> new_size) {
  int64_t n = new_size ? static_cast<int64_t>(*new_size) : indices_.numel();
  indices_ = at::randperm(n, indices_.scalar_type());
  index_ = 0;
}

std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  int64_t remaining = indices_.numel() - index_;
  if (remaining == 0) return std::nullopt;
  int64_t n = std::min(static_cast<int64_t>(batch_size), remaining);
  at::Tensor slice = indices_.slice(0, index_, index_ + n).to(at::kLong).contiguous();
  const int64_t* p = slice.data_ptr<int64_t>();
  std::vector<size_t> r(p, p + n);
  index_ += n;
  return r;
}

size_t DistributedSampler::local_sample_count() const {
  if (allow_duplicates_) return (size_ + num_replicas_ - 1) / num_replicas_;
  return size_ / num_replicas_;
}

DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas, size_t rank, bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  populate_indices();
}

void DistributedRandomSampler::populate_indices() {
  size_t local = local_sample_count();
  size_t total = local * num_replicas_;
  all_indices_.resize(size_);
  for (size_t i = 0; i < size_; ++i) all_indices_[i] = i;
  // The same permutation in every replica: a generator seeded by the epoch.
  ember::Generator gen;
  gen.manual_seed(epoch_);
  at::Tensor perm = ember::randperm(static_cast<int64_t>(size_), &gen, at::kLong);
  const int64_t* p = perm.data_ptr<int64_t>();
  for (size_t i = 0; i < size_; ++i) all_indices_[i] = static_cast<size_t>(p[i]);
  for (size_t i = size_; i < total; ++i) all_indices_.push_back(all_indices_[i - size_]);  // pad by wrapping
  begin_index_ = rank_ * local;
  end_index_ = begin_index_ + local;
  sample_index_ = begin_index_;
}

void DistributedRandomSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  populate_indices();
}

std::optional<std::vector<size_t>> DistributedRandomSampler::next(size_t batch_size) {
  if (sample_index_ >= end_index_) return std::nullopt;
  size_t n = std::min(batch_size, end_index_ - sample_index_);
  std::vector<size_t> r(all_indices_.begin() + static_cast<std::ptrdiff_t>(sample_index_),
                        all_indices_.begin() + static_cast<std::ptrdiff_t>(sample_index_ + n));
  sample_index_ += n;
  return r;
}

DistributedSequentialSampler::DistributedSequentialSampler(size_t size, size_t num_replicas, size_t rank,
                                                           bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  populate_indices();
}

void DistributedSequentialSampler::populate_indices() {
  size_t local = local_sample_count();
  begin_index_ = rank_ * local;
  end_index_ = begin_index_ + local;
  sample_index_ = begin_index_;
  all_indices_.clear();
  for (size_t i = begin_index_; i < end_index_; ++i) all_indices_.push_back(i % size_);
}

void DistributedSequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  populate_indices();
}

std::optional<std::vector<size_t>> DistributedSequentialSampler::next(size_t batch_size) {
  if (sample_index_ >= end_index_) return std::nullopt;
  size_t n = std::min(batch_size, end_index_ - sample_index_);
  size_t off = sample_index_ - begin_index_;
  std::vector<size_t> r(all_indices_.begin() + static_cast<std::ptrdiff_t>(off),
                        all_indices_.begin() + static_cast<std::ptrdiff_t>(off + n));
  sample_index_ += n;
  return r;
}

}  // namespace samplers
}  // namespace torch::data
