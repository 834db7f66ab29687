/*
 * p4u_list.h - intrusive circular doubly linked lists.
 *
 * The head is a sentinel node; an empty list points at itself. A node that
 * is on no list is kept self-linked (p4u_list_node_init / p4u_list_remove)
 * so p4u_list_node_linked() can tell. Nothing here allocates.
 */
#ifndef P4U_LIST_H
#define P4U_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "p4u_compiler.h"

struct p4u_list {
	struct p4u_list *next;
	struct p4u_list *prev;
};

#define P4U_LIST_INITIALIZER(name)	{ &(name), &(name) }

static inline void p4u_list_init(struct p4u_list *head)
{
	head->next = head;
	head->prev = head;
}

#define p4u_list_node_init p4u_list_init

static inline bool p4u_list_empty(const struct p4u_list *head)
{
	return head->next == head;
}

static inline bool p4u_list_node_linked(const struct p4u_list *node)
{
	return node->next != node;
}

static inline void p4u_list_insert_between(struct p4u_list *node,
					   struct p4u_list *prev,
					   struct p4u_list *next)
{
	node->next = next;
	node->prev = prev;
	prev->next = node;
	next->prev = node;
}

static inline void p4u_list_insert_head(struct p4u_list *head,
					struct p4u_list *node)
{
	p4u_list_insert_between(node, head, head->next);
}

static inline void p4u_list_insert_tail(struct p4u_list *head,
					struct p4u_list *node)
{
	p4u_list_insert_between(node, head->prev, head);
}

/* Insert node just before pos (pos may be the head: then it is a tail add). */
static inline void p4u_list_insert_before(struct p4u_list *pos,
					  struct p4u_list *node)
{
	p4u_list_insert_between(node, pos->prev, pos);
}

static inline void p4u_list_remove(struct p4u_list *node)
{
	node->prev->next = node->next;
	node->next->prev = node->prev;
	node->next = node;
	node->prev = node;
}

static inline struct p4u_list *p4u_list_pop_head(struct p4u_list *head)
{
	struct p4u_list *node;

	if (p4u_list_empty(head))
		return NULL;
	node = head->next;
	p4u_list_remove(node);
	return node;
}

/* Move every node of src to the tail of dst, keeping their order. */
static inline void p4u_list_splice_tail(struct p4u_list *dst,
					struct p4u_list *src)
{
	if (p4u_list_empty(src))
		return;
	src->next->prev = dst->prev;
	dst->prev->next = src->next;
	src->prev->next = dst;
	dst->prev = src->prev;
	p4u_list_init(src);
}

static inline size_t p4u_list_length(const struct p4u_list *head)
{
	const struct p4u_list *node;
	size_t n = 0;

	for (node = head->next; node != head; node = node->next)
		n++;
	return n;
}

#define p4u_list_first_entry(head, type, field) \
	(p4u_list_empty(head) ? NULL : container_of((head)->next, type, field))

#define p4u_list_foreach(head, node) \
	for ((node) = (head)->next; (node) != (head); (node) = (node)->next)

/* Safe against removal of the current node. */
#define p4u_list_foreach_safe(head, node, tmp) \
	for ((node) = (head)->next, (tmp) = (node)->next; (node) != (head); \
	     (node) = (tmp), (tmp) = (node)->next)

#define p4u_list_foreach_entry(head, pos, type, field) \
	for ((pos) = container_of((head)->next, type, field); \
	     &(pos)->field != (head); \
	     (pos) = container_of((pos)->field.next, type, field))

#define p4u_list_foreach_entry_safe(head, pos, tmp, type, field) \
	for ((pos) = container_of((head)->next, type, field), \
	     (tmp) = container_of((pos)->field.next, type, field); \
	     &(pos)->field != (head); \
	     (pos) = (tmp), (tmp) = container_of((pos)->field.next, type, field))

#endif /* P4U_LIST_H */
