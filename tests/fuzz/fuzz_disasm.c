/* fuzz_disasm.c — libFuzzer target for `plumb annotate --asm`'s reader of code (symbol/disasm.h): the input is an
 * ELF file (libdw reads it, the unwind tables give a stripped function's range, capstone decodes the bytes), the
 * address looked up is taken from the input's last 8 bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbol/disasm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/plumb-fuzz-disasm-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	uint64_t probes[3] = { 0x1040, 0x1140, 0 }; /* main and loop() of the seed */
	if (size >= 8)
		memcpy(&probes[2], data + size - 8, 8);
	for (int i = 0; i < 3; i++) {
		struct sym_code c;
		struct perr e = PERR_INIT;
		if (sym_disasm_function(path, probes[i], &c, &e) == PLUMB_OK) {
			for (size_t k = 0; k < c.n; k++)
				(void)strlen(c.insns[k].text);
			sym_code_release(&c);
		}
	}
	unlink(path);
	return 0;
}
