/* SPDX-License-Identifier: MIT */
#ifndef CS_FUZZ_H
#define CS_FUZZ_H
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#endif
