/* limits_fmt.h — the text form of a job's resource limits, shared by tmpid.conf
 * (job_cpu_max), tmpi-launch (--cpu-limit) and tmpictl (the jobs listing).  On the wire a CPU
 * limit is in thousandths of a CPU (SubmitJob.cpu_limit_milli). */
#ifndef TMPI_PROTO_LIMITS_FMT_H
#define TMPI_PROTO_LIMITS_FMT_H

#include <stddef.h>
#include <stdint.h>

/* "1.5" -> 1500 thousandths of a CPU; 0.001 to 100000 CPUs, at most three decimals.
 * 0 or -EINVAL / -ERANGE. */
int limits_parse_cpus(const char *s, uint32_t *ret);

/* 1500 -> "1.500". */
void limits_format_cpus(uint32_t milli, char *buf, size_t len);

/* "512M" -> bytes: a whole number with an optional K, M, G or T (powers of 1024).
 * 0 or -EINVAL / -ERANGE. */
int limits_parse_bytes(const char *s, uint64_t *ret);

#endif
