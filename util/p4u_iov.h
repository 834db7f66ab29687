/*
 * p4u_iov.h - checking a caller's iovec, which every transport does
 * before it takes a message or an RMA request.
 */
#ifndef P4U_IOV_H
#define P4U_IOV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <errno.h>

/* Sum of iov lengths into *len_p; -EINVAL on overflow or a NULL base. */
static inline int p4u_iov_len(const struct iovec *iov, size_t iovcnt,
			      size_t *len_p)
{
	size_t i, len = 0;

	if (iovcnt && !iov)
		return -EINVAL;
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > SIZE_MAX - len ||
		    (iov[i].iov_len && !iov[i].iov_base))
			return -EINVAL;
		len += iov[i].iov_len;
	}
	*len_p = len;
	return 0;
}

#endif /* P4U_IOV_H */
