# Where LibTorch, the CUDA toolkit and the Python of the module and the tests come from: one
# PyTorch, the one the interpreter PIPEWORKS_PYTHON imports. By default that is the virtual
# environment scripts/install_deps.sh makes inside the checkout (.venv, torch from PyTorch's own
# wheel); a machine with its own PyTorch passes -DPIPEWORKS_PYTHON=python3 (bench/gpu_check).
#
# Sets, for the rest of the build:
#   PIPEWORKS_PYTHON        the interpreter (also the Python module's and the tests')
#   CMAKE_PREFIX_PATH       + torch.utils.cmake_prefix_path, so find_package(Torch) finds the wheel
#   CUDA_TOOLKIT_ROOT_DIR   the wheel's own CUDA toolkit (nvidia/cu13) when it holds nvcc, which
#                           LibTorch's CMake config needs to find a CUDA build; a machine-wide
#                           toolkit (/usr/local/cuda) otherwise, as LibTorch's config finds it
#   PIPEWORKS_NCCL_INCLUDE  the NCCL headers of the wheel's NCCL package, for hw/cuda/
set(_default_python "${PROJECT_SOURCE_DIR}/.venv/bin/python")
if(NOT EXISTS "${_default_python}")
  set(_default_python "python3")
endif()
set(PIPEWORKS_PYTHON "${_default_python}" CACHE STRING
    "Python whose torch supplies LibTorch (default: the checkout's .venv from scripts/install_deps.sh)")

execute_process(
  COMMAND "${PIPEWORKS_PYTHON}" -c [=[
import os, torch, torch.utils
print(torch.utils.cmake_prefix_path)
print(torch.__version__)
print(torch.version.cuda or "")
try:
    import nvidia
    roots = [os.path.join(p, "cu" + (torch.version.cuda or "0").split(".")[0]) for p in nvidia.__path__]
    roots += [os.path.join(p, "nccl") for p in nvidia.__path__]
except ImportError:
    roots = []
print(";".join(r for r in roots if os.path.isdir(r)))
]=]
  OUTPUT_VARIABLE _torch_info OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE _torch_status ERROR_QUIET)
if(NOT _torch_status EQUAL 0)
  message(STATUS "pipeworks: '${PIPEWORKS_PYTHON}' cannot import torch (bash scripts/install_deps.sh "
                 "makes .venv); LibTorch is looked for on CMAKE_PREFIX_PATH only")
  return()
endif()
string(REPLACE "\n" ";" _torch_info "${_torch_info}")
list(GET _torch_info 0 _torch_prefix)
list(GET _torch_info 1 _torch_version)
list(GET _torch_info 2 _torch_cuda)
list(LENGTH _torch_info _n)
set(_wheel_dirs "")
if(_n GREATER 3)
  list(SUBLIST _torch_info 3 -1 _wheel_dirs)
endif()
list(APPEND CMAKE_PREFIX_PATH "${_torch_prefix}")
message(STATUS "pipeworks: torch ${_torch_version} (CUDA ${_torch_cuda}) from ${PIPEWORKS_PYTHON}")

foreach(_dir ${_wheel_dirs})
  if(EXISTS "${_dir}/bin/nvcc" AND NOT CUDA_TOOLKIT_ROOT_DIR)
    # scripts/install_deps.sh adds nvcc to the wheel's toolkit and the lib64 and unversioned
    # library links that CMake's CUDA modules look for.
    set(CUDA_TOOLKIT_ROOT_DIR "${_dir}" CACHE PATH "CUDA toolkit LibTorch's CMake config uses")
    set(CUDAToolkit_ROOT "${_dir}")
    set(CMAKE_CUDA_COMPILER "${_dir}/bin/nvcc" CACHE FILEPATH "nvcc of the wheel's CUDA toolkit")
  endif()
  if(EXISTS "${_dir}/include/nccl.h")
    set(PIPEWORKS_NCCL_INCLUDE "${_dir}/include")
  endif()
endforeach()
if(NOT TORCH_CUDA_ARCH_LIST)
  # pipeworks compiles no device code; this only keeps LibTorch's config from probing for GPUs.
  set(TORCH_CUDA_ARCH_LIST "9.0")
endif()
