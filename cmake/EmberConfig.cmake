# find_package(Ember): the ember package (lib/cmake/ember) under the names Ember::ember and
# Ember::torch_compat (the latter puts the <torch/torch.h> compatibility headers on the path).
include("${CMAKE_CURRENT_LIST_DIR}/../ember/emberConfig.cmake")
if(NOT TARGET Ember::ember)
  add_library(Ember::ember ALIAS ember::ember)
  add_library(Ember::frontend ALIAS ember::frontend)
  add_library(Ember::torch_compat ALIAS ember::torch_compat)
endif()
set(Ember_FOUND TRUE)
