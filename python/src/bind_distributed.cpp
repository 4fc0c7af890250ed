// ember._C._distributed: stores, process groups and work handles for ember.distributed.
// Everything that can block (store waits, connecting a group, Work.wait) runs without the GIL;
// the back ends' threads never take it (Python futures are completed by a Python thread, see
// ember/distributed/distributed_c10d.py).
#include <nanobind/stl/chrono.h>
#include <nanobind/stl/shared_ptr.h>

#include "common.h"
#include "ember/distributed/process_group_gloo.h"
#include "ember/distributed/socket.h"
#include "ember/distributed/tcp_store.h"

namespace ember::py {
namespace {
namespace dist = ember::distributed;
using nogil = nb::call_guard<nb::gil_scoped_release>;

PyObject* dist_error = nullptr;
PyObject* dist_backend_error = nullptr;
PyObject* dist_store_error = nullptr;
PyObject* dist_network_error = nullptr;

// Store values: bytes-like objects or str (UTF-8), as torch's stores take them.
dist::Bytes value_arg(nb::handle h) {
  if (PyUnicode_Check(h.ptr())) {
    Py_ssize_t n = 0;
    const char* p = PyUnicode_AsUTF8AndSize(h.ptr(), &n);
    if (!p) throw nb::python_error();
    return dist::Bytes(p, p + n);
  }
  Py_buffer view;
  if (PyObject_GetBuffer(h.ptr(), &view, PyBUF_SIMPLE) != 0) {
    PyErr_Clear();
    throw nb::type_error("a store value must be str or bytes");
  }
  const uint8_t* p = static_cast<const uint8_t*>(view.buf);
  dist::Bytes out(p, p + view.len);
  PyBuffer_Release(&view);
  return out;
}

nb::bytes bytes_obj(const dist::Bytes& b) { return nb::bytes(reinterpret_cast<const char*>(b.data()), b.size()); }

dist::ReduceOp reduce_op_arg(int op) {
  EMBER_CHECK_VALUE(op >= 0 && op <= static_cast<int>(dist::ReduceOp::BXor), "unsupported ReduceOp ", op);
  return static_cast<dist::ReduceOp>(op);
}

void register_dist_exceptions(nb::module_& m) {
  dist_error = PyErr_NewException("ember.distributed.DistError", PyExc_RuntimeError, nullptr);
  dist_backend_error = PyErr_NewException("ember.distributed.DistBackendError", dist_error, nullptr);
  dist_store_error = PyErr_NewException("ember.distributed.DistStoreError", dist_error, nullptr);
  dist_network_error = PyErr_NewException("ember.distributed.DistNetworkError", dist_error, nullptr);
  m.attr("DistError") = nb::handle(dist_error);
  m.attr("DistBackendError") = nb::handle(dist_backend_error);
  m.attr("DistStoreError") = nb::handle(dist_store_error);
  m.attr("DistNetworkError") = nb::handle(dist_network_error);
  // Registered after ember's own translator, so tried before it (nanobind tries the newest first).
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const dist::DistStoreError& e) {
      PyErr_SetString(dist_store_error, e.what());
    } catch (const dist::DistNetworkError& e) {
      PyErr_SetString(dist_network_error, e.what());
    } catch (const dist::DistBackendError& e) {
      PyErr_SetString(dist_backend_error, e.what());
    } catch (const dist::DistError& e) {
      PyErr_SetString(dist_error, e.what());
    }
  });
}

void bind_stores(nb::module_& m) {
  nb::class_<dist::Store>(m, "Store")
      .def(
          "set",
          [](dist::Store& s, const std::string& key, nb::handle value) {
            dist::Bytes v = value_arg(value);
            nb::gil_scoped_release g;
            s.set(key, v);
          },
          nb::arg("key"), nb::arg("value"))
      .def(
          "get",
          [](dist::Store& s, const std::string& key) {
            dist::Bytes v;
            {
              nb::gil_scoped_release g;
              v = s.get(key);
            }
            return bytes_obj(v);
          },
          nb::arg("key"))
      .def("add", &dist::Store::add, nb::arg("key"), nb::arg("amount"), nogil())
      .def(
          "compare_set",
          [](dist::Store& s, const std::string& key, nb::handle expected, nb::handle desired) {
            dist::Bytes e = value_arg(expected), d = value_arg(desired), r;
            {
              nb::gil_scoped_release g;
              r = s.compare_set(key, e, d);
            }
            return bytes_obj(r);
          },
          nb::arg("key"), nb::arg("expected_value"), nb::arg("desired_value"))
      .def("delete_key", &dist::Store::delete_key, nb::arg("key"), nogil())
      .def("check", &dist::Store::check, nb::arg("keys"), nogil())
      .def("num_keys", &dist::Store::num_keys, nogil())
      .def(
          "wait",
          [](dist::Store& s, const std::vector<std::string>& keys, std::optional<dist::Millis> timeout) {
            nb::gil_scoped_release g;
            s.wait(keys, timeout ? *timeout : s.timeout());
          },
          nb::arg("keys"), nb::arg("timeout") = nb::none())
      .def(
          "append",
          [](dist::Store& s, const std::string& key, nb::handle value) {
            dist::Bytes v = value_arg(value);
            nb::gil_scoped_release g;
            s.append(key, v);
          },
          nb::arg("key"), nb::arg("value"))
      .def(
          "multi_get",
          [](dist::Store& s, const std::vector<std::string>& keys) {
            std::vector<dist::Bytes> vs;
            {
              nb::gil_scoped_release g;
              for (const auto& k : keys) vs.push_back(s.get(k));
            }
            nb::list out;
            for (const auto& v : vs) out.append(bytes_obj(v));
            return out;
          },
          nb::arg("keys"))
      .def(
          "multi_set",
          [](dist::Store& s, const std::vector<std::string>& keys, nb::list values) {
            EMBER_CHECK_VALUE(keys.size() == values.size(), "multi_set: ", keys.size(), " keys but ", values.size(),
                              " values");
            std::vector<dist::Bytes> vs;
            for (nb::handle v : values) vs.push_back(value_arg(v));
            nb::gil_scoped_release g;
            for (size_t i = 0; i < keys.size(); ++i) s.set(keys[i], vs[i]);
          },
          nb::arg("keys"), nb::arg("values"))
      .def("set_timeout", &dist::Store::set_timeout, nb::arg("timeout"))
      .def_prop_ro("timeout", &dist::Store::timeout);

  nb::class_<dist::HashStore, dist::Store>(m, "HashStore").def(nb::init<>());
  nb::class_<dist::FileStore, dist::Store>(m, "FileStore")
      .def(nb::init<std::string, int>(), nb::arg("file_name"), nb::arg("world_size") = -1, nogil())
      .def_prop_ro("path", &dist::FileStore::path);
  nb::class_<dist::PrefixStore, dist::Store>(m, "PrefixStore")
      .def(nb::init<std::string, std::shared_ptr<dist::Store>>(), nb::arg("prefix"), nb::arg("store"))
      .def_prop_ro("underlying_store", &dist::PrefixStore::underlying_store);
  nb::class_<dist::TCPStore, dist::Store>(m, "TCPStore")
      .def(
          "__init__",
          [](dist::TCPStore* self, const std::string& host, int port, std::optional<int> world_size, bool is_master,
             dist::Millis timeout, bool wait_for_workers) {
            dist::TCPStoreOptions o;
            o.port = port;
            o.is_master = is_master;
            o.world_size = world_size ? *world_size : -1;
            o.wait_for_workers = wait_for_workers;
            o.timeout = timeout;
            nb::gil_scoped_release g;
            new (self) dist::TCPStore(host, o);
          },
          nb::arg("host_name"), nb::arg("port"), nb::arg("world_size") = nb::none(), nb::arg("is_master") = false,
          nb::arg("timeout") = dist::kDefaultStoreTimeout, nb::arg("wait_for_workers") = true)
      .def_prop_ro("host", &dist::TCPStore::host)
      .def_prop_ro("port", &dist::TCPStore::port);
  m.def("_local_address_towards", &dist::net::local_address_towards, nb::arg("host"), nogil());
}

void bind_groups(nb::module_& m) {
  nb::class_<dist::Work>(m, "Work")
      .def("is_completed", &dist::Work::is_completed)
      .def("is_success", &dist::Work::is_success)
      .def(
          "wait",
          [](dist::Work& w, std::optional<dist::Millis> timeout) {
            nb::gil_scoped_release g;
            w.wait(timeout ? *timeout : dist::Millis(0));
            return true;
          },
          nb::arg("timeout") = nb::none())
      .def("result", &dist::Work::result)
      .def("source_rank", &dist::Work::source_rank)
      .def("_op", &dist::Work::op);

  using PG = dist::ProcessGroup;
  nb::class_<PG>(m, "ProcessGroup")
      .def("rank", &PG::rank)
      .def("size", &PG::size)
      .def("name", &PG::backend_name)
      .def(
          "allreduce", [](PG& g, Tensor t, int op) { return g.allreduce(t, reduce_op_arg(op)); }, nogil())
      .def("broadcast", &PG::broadcast, nogil())
      .def(
          "reduce", [](PG& g, Tensor t, int root, int op) { return g.reduce(t, root, reduce_op_arg(op)); }, nogil())
      .def("allgather", &PG::allgather, nogil())
      .def("allgather_into_tensor", &PG::allgather_into_tensor, nogil())
      .def("gather", &PG::gather, nogil())
      .def("scatter", &PG::scatter, nogil())
      .def(
          "reduce_scatter",
          [](PG& g, Tensor out, std::vector<Tensor> ins, int op) {
            return g.reduce_scatter(out, std::move(ins), reduce_op_arg(op));
          },
          nogil())
      .def("alltoall_base", &PG::alltoall_base, nogil())
      .def("alltoall", &PG::alltoall, nogil())
      .def("barrier", &PG::barrier, nogil())
      .def("send", &PG::send, nogil())
      .def("recv", &PG::recv, nogil())
      .def("shutdown", &PG::shutdown, nogil());

  nb::class_<dist::ProcessGroupGloo, PG>(m, "ProcessGroupGloo")
      .def(
          "__init__",
          [](dist::ProcessGroupGloo* self, std::shared_ptr<dist::Store> store, int rank, int size, dist::Millis timeout,
             const std::string& hostname, const std::string& iface) {
            dist::GlooOptions o;
            o.timeout = timeout;
            o.hostname = hostname;
            o.iface = iface;
            nb::gil_scoped_release g;
            new (self) dist::ProcessGroupGloo(std::move(store), rank, size, o);
          },
          nb::arg("store"), nb::arg("rank"), nb::arg("size"), nb::arg("timeout"), nb::arg("hostname") = "127.0.0.1",
          nb::arg("iface") = "")
      .def_prop_ro("timeout", &dist::ProcessGroupGloo::timeout);
  m.def("_check_reduce_dtype", [](int op, const DType& dtype, const char* collective) {
    dist::check_reduce_dtype(reduce_op_arg(op), dtype.type, collective);
  });
}

}  // namespace

void bind_distributed(nb::module_& root) {
  nb::module_ m = root.def_submodule("_distributed", "process groups and stores (ember.distributed)");
  register_dist_exceptions(m);
  bind_stores(m);
  bind_groups(m);
}

}  // namespace ember::py
