// torch::data: datasets (Dataset<Self>, MNIST, TensorDataset), transforms (Normalize, Stack,
// Lambda), samplers (Sequential, Random, Distributed*) and the data loader with worker threads
// (make_data_loader(dataset, DataLoaderOptions().batch_size(64).workers(2))), as libtorch's.
#pragma once
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/frontend/nn_options.h"

namespace torch::serialize {
class OutputArchive;
class InputArchive;
}  // namespace torch::serialize

namespace torch::data {

using at::Tensor;

namespace example {
using NoTarget = void;
}  // namespace example

// One sample: data and target (Example<Tensor, NoTarget> has data only).
template <typename Data = at::Tensor, typename Target = at::Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;
  Example() = default;
  Example(Data data, Target target) : data(std::move(data)), target(std::move(target)) {}
  Data data;
  Target target;
};
template <typename Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;
  Example() = default;
  /* implicit */ Example(Data data) : data(std::move(data)) {}  // NOLINT
  operator Data&() { return data; }                             // NOLINT
  operator const Data&() const { return data; }                 // NOLINT
  Data data;
};
using TensorExample = Example<at::Tensor, example::NoTarget>;

// ---- transforms ----
namespace transforms {

template <typename InputBatch, typename OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;
  virtual ~BatchTransform() = default;
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

// Applies apply() to each example of a batch (a std::vector).
template <typename Input, typename Output>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;
  virtual Output apply(Input input) = 0;
  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> out;
    out.reserve(input_batch.size());
    for (auto& i : input_batch) out.push_back(apply(std::move(i)));
    return out;
  }
};

template <typename Input, typename Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit Lambda(FunctionType function) : function_(std::move(function)) {}
  Output apply(Input input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

template <typename Input, typename Output>
class BatchLambda : public BatchTransform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit BatchLambda(FunctionType function) : function_(std::move(function)) {}
  Output apply_batch(Input input_batch) override { return function_(std::move(input_batch)); }

 private:
  FunctionType function_;
};

// Transforms the data tensor of each example, keeping its target.
template <typename Target = at::Tensor>
class TensorTransform : public Transform<Example<at::Tensor, Target>, Example<at::Tensor, Target>> {
 public:
  using E = Example<at::Tensor, Target>;
  virtual at::Tensor operator()(at::Tensor input) = 0;
  E apply(E input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

template <typename Target = at::Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<at::Tensor(at::Tensor)>;
  explicit TensorLambda(FunctionType function) : function_(std::move(function)) {}
  at::Tensor operator()(at::Tensor input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

// (data - mean) / stddev, with one value or one per channel (dim 0 of the data).
template <typename Target = at::Tensor>
class Normalize : public TensorTransform<Target> {
 public:
  Normalize(at::ArrayRef<double> mean, at::ArrayRef<double> stddev)
      : mean(at::tensor(mean.vec(), at::kFloat).reshape({-1, 1, 1})),
        stddev(at::tensor(stddev.vec(), at::kFloat).reshape({-1, 1, 1})) {}
  Normalize(double mean, double stddev) : Normalize(at::ArrayRef<double>(mean), at::ArrayRef<double>(stddev)) {}
  at::Tensor operator()(at::Tensor input) override { return input.sub(mean).div(stddev); }
  at::Tensor mean, stddev;
};

// Collates a batch of examples into one example of stacked tensors.
template <typename BatchType>
using Collation = BatchTransform<BatchType, typename BatchType::value_type>;

template <typename T = Example<>>
struct Stack;
template <>
struct Stack<Example<>> : public Collation<std::vector<Example<>>> {
  Example<> apply_batch(std::vector<Example<>> examples) override {
    std::vector<at::Tensor> data, targets;
    data.reserve(examples.size());
    targets.reserve(examples.size());
    for (auto& e : examples) {
      data.push_back(std::move(e.data));
      targets.push_back(std::move(e.target));
    }
    return {at::stack(data), at::stack(targets)};
  }
};
template <>
struct Stack<TensorExample> : public Collation<std::vector<TensorExample>> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override {
    std::vector<at::Tensor> data;
    data.reserve(examples.size());
    for (auto& e : examples) data.push_back(std::move(e.data));
    return at::stack(data);
  }
};

}  // namespace transforms

// ---- datasets ----
namespace datasets {

template <typename SourceDataset, typename AppliedTransform>
class MapDataset;
template <typename DatasetType, typename TransformType>
MapDataset<DatasetType, TransformType> map(DatasetType dataset, TransformType transform);

template <typename Self, typename Batch = std::vector<Example<>>, typename BatchRequest = at::ArrayRef<size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  constexpr static bool is_stateful = false;
  virtual ~BatchDataset() = default;
  virtual Batch get_batch(BatchRequest request) = 0;
  virtual std::optional<size_t> size() const = 0;
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) & {
    return datasets::map(static_cast<Self&>(*this), std::move(transform));
  }
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) && {
    return datasets::map(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

// A dataset of single examples: get(index); batches are vectors of examples.
template <typename Self, typename SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;
  virtual ExampleType get(size_t index) = 0;
  std::vector<ExampleType> get_batch(at::ArrayRef<size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (size_t i : indices) batch.push_back(get(i));
    return batch;
  }
};

template <typename SourceDataset, typename AppliedTransform>
class MapDataset
    : public BatchDataset<MapDataset<SourceDataset, AppliedTransform>, typename AppliedTransform::OutputBatchType,
                          typename SourceDataset::BatchRequestType> {
 public:
  using DatasetType = SourceDataset;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename SourceDataset::BatchRequestType;
  using OutputBatchType = typename AppliedTransform::OutputBatchType;

  MapDataset(DatasetType dataset, TransformType transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}
  OutputBatchType get_batch(BatchRequestType indices) override {
    return transform_.apply_batch(dataset_.get_batch(std::move(indices)));
  }
  std::optional<size_t> size() const noexcept override { return dataset_.size(); }
  void reset() {}
  const SourceDataset& dataset() noexcept { return dataset_; }
  const AppliedTransform& transform() noexcept { return transform_; }

 private:
  SourceDataset dataset_;
  AppliedTransform transform_;
};

template <typename DatasetType, typename TransformType>
MapDataset<DatasetType, TransformType> map(DatasetType dataset, TransformType transform) {
  static_assert(std::is_same_v<typename DatasetType::BatchType, typename TransformType::InputBatchType>,
                "BatchType type of dataset does not match input type of transform");
  return {std::move(dataset), std::move(transform)};
}

// Examples are rows of one tensor (data only).
struct TensorDataset : public Dataset<TensorDataset, TensorExample> {
  explicit TensorDataset(const std::vector<at::Tensor>& tensors) : TensorDataset(at::stack(tensors)) {}
  explicit TensorDataset(at::Tensor tensor) : tensor(std::move(tensor)) {}
  TensorExample get(size_t index) override { return tensor[static_cast<int64_t>(index)]; }
  std::optional<size_t> size() const override { return static_cast<size_t>(tensor.size(0)); }
  at::Tensor tensor;
};

// MNIST (and Fashion-MNIST, the same IDX format) from `root`: train-images-idx3-ubyte,
// train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte (uncompressed, as
// libtorch expects them). Images are float32 (N, 1, 28, 28) in [0, 1], targets int64 (N).
class MNIST : public Dataset<MNIST> {
 public:
  enum class Mode { kTrain, kTest };
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);
  Example<> get(size_t index) override;
  std::optional<size_t> size() const override;
  bool is_train() const noexcept;
  const at::Tensor& images() const;
  const at::Tensor& targets() const;

 private:
  at::Tensor images_, targets_;
};

}  // namespace datasets

// ---- samplers: which indices make the next batch ----
namespace samplers {

template <typename BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  using BatchRequestType = BatchRequest;
  virtual ~Sampler() = default;
  virtual void reset(std::optional<size_t> new_size) = 0;
  virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
  virtual void save(serialize::OutputArchive&) const {
    EMBER_NOT_IMPLEMENTED("saving a sampler's state is not supported by Ember's C++ frontend");
  }
  virtual void load(serialize::InputArchive&) {
    EMBER_NOT_IMPLEMENTED("loading a sampler's state is not supported by Ember's C++ frontend");
  }
};

class SequentialSampler : public Sampler<> {
 public:
  explicit SequentialSampler(size_t size) : size_(size) {}
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }

 private:
  size_t size_, index_ = 0;
};

// A fresh random permutation (from torch::randperm, so torch::manual_seed governs it) per epoch.
class RandomSampler : public Sampler<> {
 public:
  explicit RandomSampler(int64_t size, at::ScalarType index_dtype = at::kLong);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }

 private:
  at::Tensor indices_;
  int64_t index_ = 0;
};

// The share of `num_replicas` processes: rank's slice of a (shuffled) index list padded (with
// allow_duplicates) to a multiple of num_replicas.
class DistributedSampler : public Sampler<> {
 public:
  DistributedSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true)
      : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates) {
    EMBER_CHECK_VALUE(num_replicas > 0 && rank < num_replicas, "DistributedSampler: rank ", rank, " is not in [0, ",
                      num_replicas, ")");
  }
  void set_epoch(size_t epoch) { epoch_ = epoch; }
  size_t epoch() const { return epoch_; }

 protected:
  size_t local_sample_count() const;
  size_t size_, num_replicas_, rank_, epoch_ = 0;
  bool allow_duplicates_;
};
class DistributedRandomSampler : public DistributedSampler {
 public:
  DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return sample_index_; }

 private:
  void populate_indices();
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
  std::vector<size_t> all_indices_;
};
class DistributedSequentialSampler : public DistributedSampler {
 public:
  DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return sample_index_; }

 private:
  void populate_indices();
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
  std::vector<size_t> all_indices_;
};

}  // namespace samplers

// ---- the data loader ----

struct DataLoaderOptions {
  DataLoaderOptions() = default;
  DataLoaderOptions(size_t batch_size) : batch_size_(batch_size) {}  // NOLINT
  TORCH_ARG(size_t, batch_size) = 1;
  TORCH_ARG(size_t, workers) = 0;
  TORCH_ARG(std::optional<size_t>, max_jobs) = std::nullopt;
  TORCH_ARG(std::optional<std::chrono::milliseconds>, timeout) = std::nullopt;
  TORCH_ARG(bool, enforce_ordering) = true;
  TORCH_ARG(bool, drop_last) = false;
};

template <typename Batch>
class Iterator;

// Batches of `Dataset` in the order `Sampler` gives, computed by `workers` threads (each with
// its own copy of the dataset) or, with no workers, on the calling thread. Each begin() starts
// a new epoch (the sampler is reset).
template <typename Dataset, typename Sampler>
class StatelessDataLoader {
 public:
  using BatchType = typename Dataset::BatchType;
  using BatchRequestType = typename Sampler::BatchRequestType;

  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : options_(std::move(options)), sampler_(std::move(sampler)), main_dataset_(std::move(dataset)) {
    EMBER_CHECK_VALUE(options_.batch_size() > 0, "DataLoader: batch_size must be positive");
    for (size_t w = 0; w < options_.workers(); ++w)
      threads_.emplace_back([this, d = main_dataset_]() mutable { worker(d); });
  }
  ~StatelessDataLoader() { join(); }
  StatelessDataLoader(const StatelessDataLoader&) = delete;
  StatelessDataLoader& operator=(const StatelessDataLoader&) = delete;

  Iterator<BatchType> begin();
  Iterator<BatchType> end();
  // Stops the workers (also done by the destructor).
  void join() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (joined_) return;
      joined_ = true;
      quit_ = true;
    }
    jobs_cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  const DataLoaderOptions& options() const noexcept { return options_; }

  // The next batch of the epoch, or nothing at its end.
  std::optional<BatchType> next() {
    if (options_.workers() == 0) {
      auto request = next_request();
      if (!request) return std::nullopt;
      return main_dataset_.get_batch(std::move(*request));
    }
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      auto it = options_.enforce_ordering() ? done_.find(next_seq_out_) : done_.begin();
      if (it != done_.end()) {
        Result r = std::move(it->second);
        done_.erase(it);
        ++next_seq_out_;
        --in_flight_;
        lock.unlock();
        push_jobs();
        if (r.error) std::rethrow_exception(r.error);
        return std::move(r.batch);
      }
      if (in_flight_ == 0) return std::nullopt;
      auto ready = [&] { return options_.enforce_ordering() ? done_.count(next_seq_out_) > 0 : !done_.empty(); };
      if (options_.timeout()) {
        if (!done_cv_.wait_for(lock, *options_.timeout(), ready))
          throw ember::Error("Timeout in DataLoader queue while waiting for next batch (timeout was " +
                             std::to_string(options_.timeout()->count()) + " ms)");
      } else {
        done_cv_.wait(lock, ready);
      }
    }
  }

  // Starts an epoch: drops what the last one left and resets the sampler.
  void reset() {
    if (options_.workers() > 0) {
      std::unique_lock<std::mutex> lock(mu_);
      jobs_.clear();
      in_flight_ -= queued_;
      queued_ = 0;
      done_cv_.wait(lock, [&] { return static_cast<int64_t>(done_.size()) == in_flight_; });
      done_.clear();
      in_flight_ = 0;
      ++epoch_;
      next_seq_in_ = next_seq_out_ = 0;
    }
    sampler_.reset(main_dataset_.size());
    exhausted_ = false;
    if (options_.workers() > 0) push_jobs();
  }

 private:
  struct Job {
    uint64_t epoch, seq;
    BatchRequestType request;
  };
  struct Result {
    std::optional<BatchType> batch;
    std::exception_ptr error;
  };

  std::optional<BatchRequestType> next_request() {
    if (exhausted_) return std::nullopt;
    auto request = sampler_.next(options_.batch_size());
    if (!request || (options_.drop_last() && request->size() < options_.batch_size())) {
      exhausted_ = true;
      return std::nullopt;
    }
    return request;
  }

  // Keeps max_jobs (default: twice the workers) requests queued or being worked on.
  void push_jobs() {
    size_t max_jobs = options_.max_jobs().value_or(2 * options_.workers());
    std::unique_lock<std::mutex> lock(mu_);
    while (static_cast<size_t>(in_flight_) < max_jobs) {
      lock.unlock();
      auto request = next_request();
      lock.lock();
      if (!request) break;
      jobs_.push_back(Job{epoch_, next_seq_in_++, std::move(*request)});
      ++in_flight_;
      ++queued_;
      jobs_cv_.notify_one();
    }
  }

  void worker(Dataset& dataset) {
    while (true) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        jobs_cv_.wait(lock, [&] { return quit_ || !jobs_.empty(); });
        if (quit_) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
        --queued_;
      }
      Result r;
      try {
        r.batch = dataset.get_batch(std::move(job.request));
      } catch (...) {
        r.error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (job.epoch == epoch_)
          done_.emplace(job.seq, std::move(r));
        else
          --in_flight_;
      }
      done_cv_.notify_all();
    }
  }

  DataLoaderOptions options_;
  Sampler sampler_;
  Dataset main_dataset_;
  bool exhausted_ = false;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable jobs_cv_, done_cv_;
  std::deque<Job> jobs_;
  std::map<uint64_t, Result> done_;
  int64_t in_flight_ = 0, queued_ = 0;
  uint64_t epoch_ = 0, next_seq_in_ = 0, next_seq_out_ = 0;
  bool quit_ = false, joined_ = false;
};

// An input iterator over the batches of one epoch; `*it` is the current batch.
template <typename Batch>
class Iterator {
 public:
  using value_type = Batch;
  using reference = Batch&;
  using pointer = Batch*;
  using difference_type = std::ptrdiff_t;
  using iterator_category = std::input_iterator_tag;

  Iterator() = default;  // the end
  explicit Iterator(std::function<std::optional<Batch>()> next) : next_(std::move(next)) { advance(); }
  Iterator& operator++() {
    advance();
    return *this;
  }
  Batch& operator*() {
    EMBER_CHECK(batch_.has_value(), "Attempted to dereference iterator that was past the end");
    return *batch_;
  }
  Batch* operator->() { return &**this; }
  bool operator==(const Iterator& o) const { return !batch_.has_value() && !o.batch_.has_value(); }
  bool operator!=(const Iterator& o) const { return !(*this == o); }

 private:
  void advance() { batch_ = next_ ? next_() : std::nullopt; }
  std::function<std::optional<Batch>()> next_;
  std::optional<Batch> batch_;
};

template <typename Dataset, typename Sampler>
Iterator<typename StatelessDataLoader<Dataset, Sampler>::BatchType> StatelessDataLoader<Dataset, Sampler>::begin() {
  reset();
  return Iterator<BatchType>([this] { return next(); });
}
template <typename Dataset, typename Sampler>
Iterator<typename StatelessDataLoader<Dataset, Sampler>::BatchType> StatelessDataLoader<Dataset, Sampler>::end() {
  return Iterator<BatchType>();
}

template <typename Sampler = samplers::RandomSampler, typename Dataset>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset, Sampler sampler,
                                                                        DataLoaderOptions options) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler),
                                                                 std::move(options));
}
template <typename Sampler = samplers::RandomSampler, typename Dataset,
          typename = std::enable_if_t<std::is_constructible_v<Sampler, size_t>>>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset,
                                                                        DataLoaderOptions options = {}) {
  std::optional<size_t> size = dataset.size();
  EMBER_CHECK(size.has_value(), "Expected the dataset to be sized in order to construct the Sampler");
  return make_data_loader(std::move(dataset), Sampler(*size), std::move(options));
}

}  // namespace torch::data
