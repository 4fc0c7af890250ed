#include "ember/distributed/store.h"

#include <charconv>

namespace ember::distributed {

Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string to_string(const Bytes& b) { return std::string(b.begin(), b.end()); }

int64_t parse_counter(const Bytes& value, const std::string& key) {
  int64_t v = 0;
  const char* first = reinterpret_cast<const char*>(value.data());
  const char* last = first + value.size();
  auto [end, ec] = std::from_chars(first, last, v);
  EMBER_CHECK_VALUE(ec == std::errc() && end == last && first != last, "Store.add: the value of key '", key,
                    "' is not an integer");
  return v;
}

std::string timeout_message(Millis timeout, const std::vector<std::string>& keys) {
  std::string s = "wait timeout after " + std::to_string(timeout.count()) + "ms, keys: ";
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", " : "") + keys[i];
  return s;
}

void Store::append(const std::string& key, const Bytes& value) {
  Bytes cur;
  if (check({key})) cur = get(key);
  cur.insert(cur.end(), value.begin(), value.end());
  set(key, cur);
}

// ---- KeyValueMap ----

void KeyValueMap::set(const std::string& key, const Bytes& value) { map_[key] = value; }

bool KeyValueMap::try_get(const std::string& key, Bytes& out) const {
  auto it = map_.find(key);
  if (it == map_.end()) return false;
  out = it->second;
  return true;
}

int64_t KeyValueMap::add(const std::string& key, int64_t delta) {
  auto it = map_.find(key);
  int64_t v = it == map_.end() ? 0 : parse_counter(it->second, key);
  v += delta;
  map_[key] = to_bytes(std::to_string(v));
  return v;
}

Bytes KeyValueMap::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  auto it = map_.find(key);
  if (it == map_.end()) {
    if (!expected.empty()) return expected;
    map_[key] = desired;
    return desired;
  }
  if (it->second == expected) it->second = desired;
  return it->second;
}

bool KeyValueMap::erase(const std::string& key) { return map_.erase(key) > 0; }

bool KeyValueMap::contains_all(const std::vector<std::string>& keys) const {
  for (const auto& k : keys)
    if (!map_.count(k)) return false;
  return true;
}

void KeyValueMap::append(const std::string& key, const Bytes& value) {
  Bytes& v = map_[key];
  v.insert(v.end(), value.begin(), value.end());
}

// ---- HashStore ----

void HashStore::set(const std::string& key, const Bytes& value) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    kv_.set(key, value);
  }
  cv_.notify_all();
}

Bytes HashStore::get(const std::string& key) {
  std::unique_lock<std::mutex> lock(mu_);
  Bytes out;
  if (!cv_.wait_for(lock, timeout_, [&] { return kv_.try_get(key, out); }))
    throw DistStoreError(timeout_message(timeout_, {key}));
  return out;
}

int64_t HashStore::add(const std::string& key, int64_t delta) {
  int64_t v;
  {
    std::lock_guard<std::mutex> lock(mu_);
    v = kv_.add(key, delta);
  }
  cv_.notify_all();
  return v;
}

Bytes HashStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  Bytes v;
  {
    std::lock_guard<std::mutex> lock(mu_);
    v = kv_.compare_set(key, expected, desired);
  }
  cv_.notify_all();
  return v;
}

bool HashStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  return kv_.erase(key);
}

bool HashStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  return kv_.contains_all(keys);
}

int64_t HashStore::num_keys() {
  std::lock_guard<std::mutex> lock(mu_);
  return kv_.size();
}

void HashStore::wait(const std::vector<std::string>& keys, Millis timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return kv_.contains_all(keys); }))
    throw DistStoreError(timeout_message(timeout, keys));
}

void HashStore::append(const std::string& key, const Bytes& value) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    kv_.append(key, value);
  }
  cv_.notify_all();
}

// ---- PrefixStore ----

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> base)
    : Store(base ? base->timeout() : kDefaultStoreTimeout), prefix_(std::move(prefix)), base_(std::move(base)) {
  EMBER_CHECK_VALUE(base_ != nullptr, "PrefixStore: the underlying store is None");
}

std::vector<std::string> PrefixStore::keys(const std::vector<std::string>& ks) const {
  std::vector<std::string> out;
  out.reserve(ks.size());
  for (const auto& k : ks) out.push_back(key(k));
  return out;
}

void PrefixStore::set(const std::string& k, const Bytes& value) { base_->set(key(k), value); }
Bytes PrefixStore::get(const std::string& k) { return base_->get(key(k)); }
int64_t PrefixStore::add(const std::string& k, int64_t delta) { return base_->add(key(k), delta); }
Bytes PrefixStore::compare_set(const std::string& k, const Bytes& expected, const Bytes& desired) {
  return base_->compare_set(key(k), expected, desired);
}
bool PrefixStore::delete_key(const std::string& k) { return base_->delete_key(key(k)); }
bool PrefixStore::check(const std::vector<std::string>& ks) { return base_->check(keys(ks)); }
int64_t PrefixStore::num_keys() { return base_->num_keys(); }
void PrefixStore::wait(const std::vector<std::string>& ks, Millis timeout) { base_->wait(keys(ks), timeout); }
void PrefixStore::append(const std::string& k, const Bytes& value) { base_->append(key(k), value); }

}  // namespace ember::distributed
