// Note [C++ checkpoint pickles] (frontend/pickle.h).
#include "ember/frontend/pickle.h"

#include <cstring>
#include <istream>
#include <iterator>
#include <ostream>
#include <random>
#include <unordered_map>

#include "ember/core/allocator.h"
#include "ember/serialize/io.h"
#include "ember/serialize/zip_archive.h"

namespace torch::serialize::detail {

namespace {

constexpr const char* kStorageNames[] = {
    "BoolStorage", "ByteStorage",     "CharStorage",  "ShortStorage",  "IntStorage",          "LongStorage",
    "HalfStorage", "BFloat16Storage", "FloatStorage", "DoubleStorage", "ComplexFloatStorage", "ComplexDoubleStorage"};

const char* storage_name(ScalarType t) {
  int i = static_cast<int>(t);
  EMBER_CHECK(i >= 0 && i < ember::kNumScalarTypes, "torch::save: no storage type for dtype ", c10::toString(t));
  return kStorageNames[i];
}

ScalarType storage_dtype(const std::string& name) {
  for (int i = 0; i < ember::kNumScalarTypes; ++i)
    if (name == kStorageNames[i]) return static_cast<ScalarType>(i);
  return ScalarType::Undefined;
}

[[noreturn]] void corrupt(const std::string& why) {
  throw ember::Error("torch::load: corrupted or unsupported data.pkl (" + why + ")");
}

// ---- writer ----

class Pickler {
 public:
  std::string out;
  std::vector<std::pair<std::string, at::Tensor>> storages;  // record key, contiguous data

  void begin() {
    op(0x80);
    out.push_back(2);  // PROTO 2, as torch.save
  }
  void end() { op('.'); }

  void write(const PickleValue& v) {
    using K = PickleValue::Kind;
    switch (v.kind) {
      case K::None:
        op('N');
        return;
      case K::Bool:
        op(v.b ? 0x88 : 0x89);
        return;
      case K::Int:
        integer(v.i);
        return;
      case K::Double: {
        op('G');
        uint64_t bits;
        std::memcpy(&bits, &v.d, 8);
        for (int k = 7; k >= 0; --k) out.push_back(static_cast<char>((bits >> (8 * k)) & 0xff));  // big-endian
        return;
      }
      case K::String:
        string(v.s);
        return;
      case K::Tensor:
        tensor(v.tensor);
        return;
      case K::List:
        op(']');
        if (!v.list->empty()) {
          op('(');
          for (const auto& e : *v.list) write(e);
          op('e');
        }
        return;
      case K::Tuple:
        op('(');
        for (const auto& e : *v.list) write(e);
        op('t');
        return;
      case K::Dict:
        global("collections", "OrderedDict");
        op(')');
        op('R');
        if (!v.items->empty()) {
          op('(');
          for (const auto& [k, val] : *v.items) {
            write(k);
            write(val);
          }
          op('u');
        }
        return;
      default:
        throw ember::Error("torch::save: cannot pickle a " + v.describe());
    }
  }

 private:
  void op(int c) { out.push_back(static_cast<char>(c)); }
  void u32(uint32_t n) {
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<char>((n >> (8 * k)) & 0xff));
  }
  void integer(int64_t n) {
    if (n >= 0 && n < 256) {
      op('K');
      out.push_back(static_cast<char>(n));
    } else if (n >= INT32_MIN && n <= INT32_MAX) {
      op('J');
      u32(static_cast<uint32_t>(static_cast<int32_t>(n)));
    } else {  // LONG1: little-endian two's complement, 8 bytes suffice
      op(0x8a);
      out.push_back(8);
      for (int k = 0; k < 8; ++k) out.push_back(static_cast<char>((static_cast<uint64_t>(n) >> (8 * k)) & 0xff));
    }
  }
  void string(const std::string& s) {
    op('X');
    u32(static_cast<uint32_t>(s.size()));
    out += s;
  }
  void global(const char* module, const char* name) {
    op('c');
    out += module;
    out.push_back('\n');
    out += name;
    out.push_back('\n');
  }
  // torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())
  void tensor(const at::Tensor& t_in) {
    EMBER_CHECK(t_in.defined(), "torch::save: cannot save an undefined tensor");
    EMBER_CHECK(t_in.is_cpu(), "torch::save: only CPU tensors can be saved");
    at::Tensor t = t_in.detach().contiguous();
    std::string key = std::to_string(storages.size());
    storages.emplace_back(key, t);
    global("torch._utils", "_rebuild_tensor_v2");
    op('(');
    op('(');
    string("storage");
    global("torch", storage_name(t.scalar_type()));
    string(key);
    string("cpu");
    integer(t.numel());
    op('t');
    op('Q');  // BINPERSID
    integer(0);
    op('(');
    for (int64_t s : t.sizes()) integer(s);
    op('t');
    op('(');
    for (int64_t s : t.strides()) integer(s);
    op('t');
    op(t_in.requires_grad() ? 0x88 : 0x89);
    global("collections", "OrderedDict");
    op(')');
    op('R');
    op('t');
    op('R');
  }
};

// ---- reader ----

using Loader = std::function<PickleValue(const std::string& key, ScalarType dtype, int64_t numel)>;

class Unpickler {
 public:
  Unpickler(const std::string& data, Loader loader) : data_(data), loader_(std::move(loader)) {}

  PickleValue run() {
    while (true) {
      uint8_t c = byte();
      switch (c) {
        case 0x80:  // PROTO
          byte();
          break;
        case 0x95:  // FRAME
          take(8);
          break;
        case '.':  // STOP
          if (stack_.size() != 1) corrupt("STOP with " + std::to_string(stack_.size()) + " values on the stack");
          return pop();
        case 'N':
          push(PickleValue());
          break;
        case 0x88:
          push(PickleValue::boolean(true));
          break;
        case 0x89:
          push(PickleValue::boolean(false));
          break;
        case 'K':
          push(PickleValue::integer(byte()));
          break;
        case 'M': {
          const uint8_t* p = take(2);
          push(PickleValue::integer(p[0] | (p[1] << 8)));
          break;
        }
        case 'J':
          push(PickleValue::integer(static_cast<int32_t>(le32(take(4)))));
          break;
        case 0x8a: {  // LONG1
          uint8_t n = byte();
          push(PickleValue::integer(long_le(take(n), n)));
          break;
        }
        case 0x8b: {  // LONG4
          uint32_t n = le32(take(4));
          push(PickleValue::integer(long_le(take(n), n)));
          break;
        }
        case 'G': {
          const uint8_t* p = take(8);
          uint64_t bits = 0;
          for (int k = 0; k < 8; ++k) bits = (bits << 8) | p[k];
          double d;
          std::memcpy(&d, &bits, 8);
          push(PickleValue::real(d));
          break;
        }
        case 'X': {
          uint32_t n = le32(take(4));
          push(PickleValue::string(chars(n)));
          break;
        }
        case 0x8c: {  // SHORT_BINUNICODE
          uint8_t n = byte();
          push(PickleValue::string(chars(n)));
          break;
        }
        case 0x8d: {  // BINUNICODE8
          const uint8_t* p = take(8);
          uint64_t n = le32(p) | (static_cast<uint64_t>(le32(p + 4)) << 32);
          push(PickleValue::string(chars(n)));
          break;
        }
        case 'U': {  // SHORT_BINSTRING
          uint8_t n = byte();
          push(PickleValue::string(chars(n)));
          break;
        }
        case 'T': {  // BINSTRING
          uint32_t n = le32(take(4));
          push(PickleValue::string(chars(n)));
          break;
        }
        case 'C': {  // SHORT_BINBYTES
          uint8_t n = byte();
          push(PickleValue::string(chars(n)));
          break;
        }
        case 'B': {  // BINBYTES
          uint32_t n = le32(take(4));
          push(PickleValue::string(chars(n)));
          break;
        }
        case ']':
          push(PickleValue::new_list());
          break;
        case ')':
          push(PickleValue::new_tuple());
          break;
        case '}':
          push(PickleValue::new_dict());
          break;
        case '(':
          marks_.push_back(stack_.size());
          break;
        case 'a': {  // APPEND
          PickleValue v = pop();
          list_at_top("APPEND").list->push_back(std::move(v));
          break;
        }
        case 'e': {  // APPENDS
          PickleList items = pop_mark();
          auto& l = list_at_top("APPENDS");
          for (auto& v : items) l.list->push_back(std::move(v));
          break;
        }
        case 'l':
          push(PickleValue::new_list(pop_mark()));
          break;
        case 't':
          push(PickleValue::new_tuple(pop_mark()));
          break;
        case 0x85:
        case 0x86:
        case 0x87: {  // TUPLE1..3
          size_t n = c - 0x84u;
          need(n);
          PickleList items(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
          stack_.resize(stack_.size() - n);
          push(PickleValue::new_tuple(std::move(items)));
          break;
        }
        case 's': {  // SETITEM
          PickleValue v = pop(), k = pop();
          dict_at_top("SETITEM").items->emplace_back(std::move(k), std::move(v));
          break;
        }
        case 'u': {  // SETITEMS
          PickleList kv = pop_mark();
          if (kv.size() % 2) corrupt("SETITEMS with an odd number of values");
          auto& d = dict_at_top("SETITEMS");
          for (size_t k = 0; k < kv.size(); k += 2) d.items->emplace_back(std::move(kv[k]), std::move(kv[k + 1]));
          break;
        }
        case 'd': {  // DICT
          PickleList kv = pop_mark();
          if (kv.size() % 2) corrupt("DICT with an odd number of values");
          PickleValue d = PickleValue::new_dict();
          for (size_t k = 0; k < kv.size(); k += 2) d.items->emplace_back(std::move(kv[k]), std::move(kv[k + 1]));
          push(std::move(d));
          break;
        }
        case 'c': {  // GLOBAL
          std::string module = line(), name = line();
          push(make_global(module, name));
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          PickleValue name = pop(), module = pop();
          if (name.kind != PickleValue::Kind::String || module.kind != PickleValue::Kind::String)
            corrupt("STACK_GLOBAL expects two strings");
          push(make_global(module.s, name.s));
          break;
        }
        case 'Q': {  // BINPERSID
          push(persistent_load(pop()));
          break;
        }
        case 'R': {  // REDUCE
          PickleValue args = pop(), fn = pop();
          push(reduce(fn, args));
          break;
        }
        case 0x81: {  // NEWOBJ
          PickleValue args = pop(), cls = pop();
          push(reduce(cls, args));
          break;
        }
        case 'b': {  // BUILD: the state of an OrderedDict (_metadata) or a Parameter is not needed
          pop();
          need(1);
          break;
        }
        case 'q':
          memo_put(byte());
          break;
        case 'r':
          memo_put(le32(take(4)));
          break;
        case 0x94:
          memo_put(static_cast<uint32_t>(memo_.size()));
          break;
        case 'h':
          memo_get(byte());
          break;
        case 'j':
          memo_get(le32(take(4)));
          break;
        default:
          corrupt("unsupported pickle opcode 0x" + hex(c));
      }
    }
  }

 private:
  static std::string hex(uint8_t c) {
    const char* d = "0123456789abcdef";
    return {d[c >> 4], d[c & 15]};
  }
  const uint8_t* take(size_t n) {
    if (n > data_.size() - pos_) corrupt("truncated");
    const uint8_t* p = reinterpret_cast<const uint8_t*>(data_.data()) + pos_;
    pos_ += n;
    return p;
  }
  uint8_t byte() { return *take(1); }
  static uint32_t le32(const uint8_t* p) {
    return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
  }
  static int64_t long_le(const uint8_t* p, size_t n) {
    if (n > 8) corrupt("integer wider than 64 bits");
    if (n == 0) return 0;
    uint64_t v = 0;
    for (size_t k = 0; k < n; ++k) v |= static_cast<uint64_t>(p[k]) << (8 * k);
    if (n < 8 && (p[n - 1] & 0x80)) v |= ~uint64_t(0) << (8 * n);  // sign-extend
    return static_cast<int64_t>(v);
  }
  std::string chars(uint64_t n) {
    const uint8_t* p = take(n);
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  std::string line() {
    size_t end = data_.find('\n', pos_);
    if (end == std::string::npos) corrupt("truncated GLOBAL");
    std::string s = data_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }
  void push(PickleValue v) { stack_.push_back(std::move(v)); }
  void need(size_t n) {
    size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() < floor + n) corrupt("stack underflow");
  }
  PickleValue pop() {
    need(1);
    PickleValue v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  PickleList pop_mark() {
    if (marks_.empty()) corrupt("no MARK");
    size_t m = marks_.back();
    marks_.pop_back();
    PickleList items(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(m)),
                     std::make_move_iterator(stack_.end()));
    stack_.resize(m);
    return items;
  }
  PickleValue& list_at_top(const char* op) {
    need(1);
    if (stack_.back().kind != PickleValue::Kind::List) corrupt(std::string(op) + " to a non-list");
    return stack_.back();
  }
  PickleValue& dict_at_top(const char* op) {
    need(1);
    if (stack_.back().kind != PickleValue::Kind::Dict) corrupt(std::string(op) + " to a non-dict");
    return stack_.back();
  }
  void memo_put(uint32_t k) {
    need(1);
    memo_[k] = stack_.back();
  }
  void memo_get(uint32_t k) {
    auto it = memo_.find(k);
    if (it == memo_.end()) corrupt("memo key " + std::to_string(k) + " is unset");
    push(it->second);
  }

  static PickleValue make_global(const std::string& module, const std::string& name) {
    PickleValue g;
    g.kind = PickleValue::Kind::Global;
    g.s = module + "." + name;
    if (module == "torch") g.storage_dtype = storage_dtype(name);
    static const char* known[] = {"collections.OrderedDict",
                                  "torch._utils._rebuild_tensor_v2",
                                  "torch._utils._rebuild_tensor",
                                  "torch._utils._rebuild_parameter",
                                  "torch._utils._rebuild_parameter_with_state",
                                  "torch.Size",
                                  "builtins.set",
                                  "__builtin__.set"};
    bool ok = g.storage_dtype != ScalarType::Undefined;
    for (const char* k : known) ok = ok || g.s == k;
    if (!ok) corrupt("global " + g.s + " is not allowed (only tensors, containers and numbers load)");
    return g;
  }

  PickleValue persistent_load(const PickleValue& pid) {
    const PickleList* t = pid.kind == PickleValue::Kind::Tuple ? pid.list.get() : nullptr;
    if (!t || t->size() != 5 || (*t)[0].kind != PickleValue::Kind::String || (*t)[0].s != "storage" ||
        (*t)[1].kind != PickleValue::Kind::Global || (*t)[1].storage_dtype == ScalarType::Undefined ||
        (*t)[2].kind != PickleValue::Kind::String || (*t)[4].kind != PickleValue::Kind::Int)
      corrupt("persistent id " + pid.describe() + " is not ('storage', <typed storage>, key, location, numel)");
    return loader_((*t)[2].s, (*t)[1].storage_dtype, (*t)[4].i);
  }

  PickleValue reduce(const PickleValue& fn, const PickleValue& args) {
    if (fn.kind != PickleValue::Kind::Global || args.kind != PickleValue::Kind::Tuple)
      corrupt("REDUCE of " + fn.describe() + " with " + args.describe());
    const PickleList& a = *args.list;
    if (fn.s == "collections.OrderedDict") {
      PickleValue d = PickleValue::new_dict();
      if (!a.empty() && a[0].kind == PickleValue::Kind::List)  // OrderedDict([(k, v), ...])
        for (const auto& kv : *a[0].list) {
          if (kv.kind != PickleValue::Kind::Tuple || kv.list->size() != 2) corrupt("OrderedDict item");
          d.items->emplace_back((*kv.list)[0], (*kv.list)[1]);
        }
      return d;
    }
    if (fn.s == "torch._utils._rebuild_tensor_v2" || fn.s == "torch._utils._rebuild_tensor") return rebuild_tensor(a);
    if (fn.s == "torch._utils._rebuild_parameter" || fn.s == "torch._utils._rebuild_parameter_with_state") {
      if (a.size() < 2 || a[0].kind != PickleValue::Kind::Tensor || a[1].kind != PickleValue::Kind::Bool)
        corrupt("_rebuild_parameter arguments");
      PickleValue p = a[0];
      p.tensor.requires_grad_(a[1].b);
      return p;
    }
    if (fn.s == "torch.Size") {
      if (a.size() != 1 || a[0].kind != PickleValue::Kind::Tuple) corrupt("torch.Size arguments");
      return a[0];
    }
    if (fn.s == "builtins.set" || fn.s == "__builtin__.set")
      return a.empty() ? PickleValue::new_list() : PickleValue::new_list(*a[0].list);
    corrupt("cannot call " + fn.s);
  }

  PickleValue rebuild_tensor(const PickleList& a) {
    using K = PickleValue::Kind;
    if (a.size() < 4 || a[0].kind != K::Storage || a[1].kind != K::Int || a[2].kind != K::Tuple ||
        a[3].kind != K::Tuple)
      corrupt("_rebuild_tensor_v2 expects (storage, offset, size, stride, ...)");
    const PickleValue& st = a[0];
    std::vector<int64_t> sizes, strides;
    for (const auto& v : *a[2].list) {
      if (v.kind != K::Int || v.i < 0) corrupt("tensor sizes must be non-negative integers");
      sizes.push_back(v.i);
    }
    for (const auto& v : *a[3].list) {
      if (v.kind != K::Int || v.i < 0) corrupt("tensor strides must be non-negative integers");
      strides.push_back(v.i);
    }
    if (sizes.size() != strides.size()) corrupt("tensor sizes and strides differ in length");
    int64_t offset = a[1].i;
    if (offset < 0) corrupt("negative storage offset");
    // The last element addressed must lie inside the storage (computed without overflow).
    bool empty = false;
    __int128 last = offset;
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (sizes[k] == 0) empty = true;
      last += static_cast<__int128>(sizes[k] > 0 ? sizes[k] - 1 : 0) * strides[k];
    }
    if (!empty && last >= st.storage_numel)
      corrupt("tensor of size " + ember::shape_str(sizes) + " at offset " + std::to_string(offset) +
              " does not fit its storage of " + std::to_string(st.storage_numel) + " elements");
    auto impl = ember::IntrusivePtr<ember::TensorImpl>::make(st.storage, st.storage_dtype, sizes, strides, offset);
    at::Tensor t{ember::Tensor(std::move(impl))};
    if (a.size() > 4 && a[4].kind == K::Bool && a[4].b) t.requires_grad_(true);
    return PickleValue::of(std::move(t));
  }

  const std::string& data_;
  Loader loader_;
  size_t pos_ = 0;
  std::vector<PickleValue> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint32_t, PickleValue> memo_;
};

std::string archive_prefix(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.find_last_of('.');
  std::string stem = dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
  return stem.empty() ? "archive" : stem;
}

void write_archive(ember::serialize::ZipWriter& w, const std::string& prefix, const PickleValue& value) {
  Pickler p;
  p.begin();
  p.write(value);
  p.end();
  try {
    w.write_record(prefix + "/data.pkl", p.out.data(), p.out.size());
    w.write_record(prefix + "/.format_version", "1", 1);
    w.write_record(prefix + "/.storage_alignment", "64", 2);
    w.write_record(prefix + "/byteorder", "little", 6);
    for (const auto& [key, t] : p.storages) w.write_record(prefix + "/data/" + key, t.data_ptr(), t.nbytes());
    w.write_record(prefix + "/version", "3\n", 2);
    std::mt19937_64 rng(std::random_device{}());
    std::string sid;
    for (int k = 0; k < 40; ++k) sid.push_back(static_cast<char>('0' + rng() % 10));
    w.write_record(prefix + "/.data/serialization_id", sid.data(), sid.size());
    w.finish();
  } catch (...) {
    w.abort();
    throw;
  }
}

PickleValue read_archive(ember::serialize::ZipReader& r) {
  std::string prefix;
  for (const std::string& n : r.names()) {
    size_t slash = n.find('/');
    if (slash != std::string::npos && n.substr(slash) == "/data.pkl") {
      prefix = n.substr(0, slash);
      break;
    }
  }
  EMBER_CHECK(!prefix.empty(),
              "torch::load: the archive has no <name>/data.pkl record (not a checkpoint saved by "
              "torch.save, ember.save or torch::save?)");
  if (r.has_record(prefix + "/byteorder"))
    EMBER_CHECK(r.read(prefix + "/byteorder") == "little", "torch::load: big-endian checkpoints are not supported");
  std::string pkl = r.read(prefix + "/data.pkl");
  std::unordered_map<std::string, PickleValue> cache;
  Loader loader = [&](const std::string& key, ScalarType dtype, int64_t numel) -> PickleValue {
    auto it = cache.find(key);
    if (it != cache.end()) {
      if (it->second.storage_dtype != dtype) corrupt("storage " + key + " read with two dtypes");
      return it->second;
    }
    const ember::serialize::ZipEntry& e = r.entry(prefix + "/data/" + key);
    r.data_offset(e);  // bounds the record's size by the file (Note [Reading untrusted archives])
    size_t esize = ember::element_size(dtype);
    // Compared by division first: numel * esize must not wrap around to the record's size.
    if (numel < 0 || static_cast<uint64_t>(numel) > e.size / esize || e.size != static_cast<uint64_t>(numel) * esize)
      corrupt("storage " + key + " holds " + std::to_string(e.size) + " bytes, not " + std::to_string(numel) +
              " elements of " + c10::toString(dtype));
    ember::Storage s = ember::StorageImpl::allocate(e.size, ember::cpu_allocator());
    if (e.size) r.read(e, s->data(), e.size);
    PickleValue v;
    v.kind = PickleValue::Kind::Storage;
    v.storage = std::move(s);
    v.storage_dtype = dtype;
    v.storage_numel = numel;
    cache.emplace(key, v);
    return v;
  };
  return Unpickler(pkl, loader).run();
}

}  // namespace

PickleValue PickleValue::string(std::string v) {
  PickleValue p;
  p.kind = Kind::String;
  p.s = std::move(v);
  return p;
}
PickleValue PickleValue::integer(int64_t v) {
  PickleValue p;
  p.kind = Kind::Int;
  p.i = v;
  return p;
}
PickleValue PickleValue::real(double v) {
  PickleValue p;
  p.kind = Kind::Double;
  p.d = v;
  return p;
}
PickleValue PickleValue::boolean(bool v) {
  PickleValue p;
  p.kind = Kind::Bool;
  p.b = v;
  return p;
}
PickleValue PickleValue::of(at::Tensor t) {
  PickleValue p;
  p.kind = Kind::Tensor;
  p.tensor = std::move(t);
  return p;
}
PickleValue PickleValue::new_list(PickleList v) {
  PickleValue p;
  p.kind = Kind::List;
  p.list = std::make_shared<PickleList>(std::move(v));
  return p;
}
PickleValue PickleValue::new_tuple(PickleList v) {
  PickleValue p;
  p.kind = Kind::Tuple;
  p.list = std::make_shared<PickleList>(std::move(v));
  return p;
}
PickleValue PickleValue::new_dict(PickleItems v) {
  PickleValue p;
  p.kind = Kind::Dict;
  p.items = std::make_shared<PickleItems>(std::move(v));
  return p;
}

std::string PickleValue::describe() const {
  switch (kind) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
      return "int";
    case Kind::Double:
      return "float";
    case Kind::String:
      return "str";
    case Kind::Tensor:
      return "Tensor";
    case Kind::List:
      return "list";
    case Kind::Tuple:
      return "tuple";
    case Kind::Dict:
      return "dict";
    case Kind::Global:
      return "global " + s;
    case Kind::Storage:
      return "storage";
    case Kind::Mark:
      return "mark";
  }
  return "?";
}

void save_archive(const PickleValue& value, const std::string& path) {
  auto w = ember::serialize::ZipWriter::to_file(path);
  write_archive(w, archive_prefix(path), value);
}

void save_archive(const PickleValue& value, std::ostream& out) {
  std::string bytes;
  ember::serialize::ZipWriter w(ember::serialize::vector_sink(&bytes));
  write_archive(w, "archive", value);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  EMBER_CHECK(out.good(), "torch::save: writing to the stream failed");
}

PickleValue load_archive(const std::string& path) {
  auto r = ember::serialize::ZipReader::open(path);
  return read_archive(r);
}

PickleValue load_archive(std::istream& in) {
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ember::serialize::ZipReader r(ember::serialize::memory_source(bytes.data(), bytes.size()));
  return read_archive(r);
}

}  // namespace torch::serialize::detail
