/*
 * p4e_iov.c - copies in and out of MD / ME regions, which are either one
 * contiguous buffer or an iovec array. Callers have already clipped
 * offset and length to the region: these helpers trust them.
 */
#include <config.h>

#include "p4e_priv.h"

uint64_t p4e_iov_total(const struct iovec *iov, size_t iovcnt)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	return total;
}

/* Find the iovec element holding offset; *skip_p = offset inside it. */
static size_t p4e_iov_seek(const struct iovec *iov, size_t iovcnt,
			   uint64_t offset, uint64_t *skip_p)
{
	size_t i;

	for (i = 0; i < iovcnt && offset >= iov[i].iov_len; i++)
		offset -= iov[i].iov_len;
	*skip_p = offset;
	return i;
}

void p4e_region_copy_in(void *start, uint32_t iovcnt, uint64_t offset,
			const void *src, uint64_t len)
{
	const struct iovec *iov = start;
	const uint8_t *s = src;
	uint64_t skip, n;
	size_t i;

	if (!len)
		return;
	if (!iovcnt) {
		memcpy(p4e_addr_add(start, offset), src, len);
		return;
	}
	for (i = p4e_iov_seek(iov, iovcnt, offset, &skip); i < iovcnt && len;
	     i++, skip = 0) {
		n = P4U_MIN(len, iov[i].iov_len - skip);
		memcpy((uint8_t *)iov[i].iov_base + skip, s, n);
		s += n;
		len -= n;
	}
}

void p4e_region_copy_out(const void *start, uint32_t iovcnt, uint64_t offset,
			 void *dst, uint64_t len)
{
	const struct iovec *iov = start;
	uint8_t *d = dst;
	uint64_t skip, n;
	size_t i;

	if (!len)
		return;
	if (!iovcnt) {
		memcpy(dst, p4e_addr_add((void *)start, offset), len);
		return;
	}
	for (i = p4e_iov_seek(iov, iovcnt, offset, &skip); i < iovcnt && len;
	     i++, skip = 0) {
		n = P4U_MIN(len, iov[i].iov_len - skip);
		memcpy(d, (const uint8_t *)iov[i].iov_base + skip, n);
		d += n;
		len -= n;
	}
}

size_t p4e_region_iov(void *start, uint32_t iovcnt, uint64_t offset,
		      uint64_t len, struct iovec *out, size_t max)
{
	const struct iovec *iov = start;
	uint64_t skip, n;
	size_t i, cnt = 0;

	if (!len)
		return 0;
	if (!iovcnt) {
		if (!max)
			return 0;
		out[0].iov_base = p4e_addr_add(start, offset);
		out[0].iov_len = len;
		return 1;
	}
	for (i = p4e_iov_seek(iov, iovcnt, offset, &skip); i < iovcnt && len;
	     i++, skip = 0) {
		n = P4U_MIN(len, iov[i].iov_len - skip);
		if (!n)
			continue;
		if (cnt == max)
			return 0;
		out[cnt].iov_base = (uint8_t *)iov[i].iov_base + skip;
		out[cnt].iov_len = n;
		cnt++;
		len -= n;
	}
	return len ? 0 : cnt;
}

void *p4e_region_addr(void *start, uint32_t iovcnt, uint64_t offset)
{
	const struct iovec *iov = start;
	uint64_t skip;
	size_t i;

	if (!iovcnt)
		return p4e_addr_add(start, offset);
	i = p4e_iov_seek(iov, iovcnt, offset, &skip);
	return i < iovcnt ? (uint8_t *)iov[i].iov_base + skip : NULL;
}
