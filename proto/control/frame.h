/* frame.h — length-prefixed protobuf frames of the control plane.
 *
 * A frame is a 4-byte big-endian body length followed by one packed tmpi.Envelope.  Every
 * reader passes the largest body it accepts; a larger announced length is refused before any
 * byte of the body is read, so a peer cannot make us allocate what it likes.
 */
#ifndef TMPI_PROTO_FRAME_H
#define TMPI_PROTO_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "control.pb-c.h"

#define FRAME_HEADER_SIZE 4
#define FRAME_DEFAULT_MAX (4u << 20)
/* Program bytes travel in chunks this large, well under any sane frame maximum. */
#define FRAME_PROGRAM_CHUNK (1u << 20)

/* Parse a header: 0 and the body length, or -EMSGSIZE when it exceeds max, -EBADMSG for an
 * empty body (an Envelope always carries one message). */
int frame_parse_header(const uint8_t hdr[FRAME_HEADER_SIZE], size_t max, size_t *ret_len);

/* Decode a body; NULL when it is not a well-formed Envelope carrying a message.  Free with
 * frame_free(). */
Tmpi__Envelope *frame_decode(const uint8_t *body, size_t len);
/* 1 when m (any of our messages, decoded) holds nothing that would not encode again: no
 * field number 0 among the fields protobuf-c kept without knowing them, in m or any message
 * inside it.  frame_decode refuses an envelope that fails it. */
int frame_message_valid(const ProtobufCMessage *m);
void frame_free(Tmpi__Envelope *env);

/* Encode header + body into a malloc'ed buffer: 0, -EMSGSIZE when over max, -ENOMEM. */
int frame_encode(const Tmpi__Envelope *env, size_t max, uint8_t **ret_buf, size_t *ret_len);

/* Blocking I/O on a stream socket, for the tools.  frame_read_fd returns 0 with *ret set,
 * -ECONNRESET on a clean end of stream, -EMSGSIZE, -EBADMSG or another negative errno. */
int frame_write_fd(int fd, const Tmpi__Envelope *env, size_t max);
int frame_read_fd(int fd, size_t max, Tmpi__Envelope **ret);

/* Name of the message an Envelope carries, for logs. */
const char *frame_msg_name(const Tmpi__Envelope *env);

#endif
