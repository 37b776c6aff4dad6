/* Training text for the validation trainer: a real English corpus shipped by a Debian package,
 * tokenized bytewise (token = byte value, vocab 256), split into train and held-out parts.
 *
 * Default corpus: the `fortunes` package, /usr/share/games/fortunes (≈2.5 MB of quotations, prose,
 * jokes and definitions). Every regular file there except the `.dat` indexes is read in name order,
 * and the `%` separator lines between entries are dropped. The last HOLDOUT fraction of the bytes is
 * the held-out split. Plain C. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRAINER_DATA_DEFAULT_DIR "/usr/share/games/fortunes"
#define TRAINER_DATA_VOCAB 256

typedef struct {
  unsigned char *text;
  size_t len;        /* all bytes */
  size_t train_len;  /* [0, train_len) trains, [train_len, len) is held out */
  int files;
} TrainerData;

/* PATH is a file or a directory (read as described above). 0 on success, -1 with ERR set. */
int trainer_data_load (TrainerData *data, const char *path, double holdout, char *err, size_t err_len);
/* Adopts a buffer of text (copied), for tests. */
int trainer_data_from_text (TrainerData *data, const char *text, size_t len, double holdout, char *err, size_t err_len);
void trainer_data_clear (TrainerData *data);
/* BATCH windows of T+1 bytes from the train (HELDOUT = 0) or held-out split, at offsets drawn from
 * (SEED, STREAM): tokens = window[0..T), targets = window[1..T]. Deterministic, so each DP rank
 * passes its own STREAM and a rerun reads the same data. */
void trainer_data_batch (const TrainerData *data, int heldout, uint64_t seed, uint64_t stream, int batch, int T,
                         int *tokens, int *targets);

#ifdef __cplusplus
}
#endif
