/* ids.h: token ids given as text, "1,2,3" (--ids of the attention and measure views and of
 * generate, --decode of tokenize): one parser, so every command reads and refuses them alike. */
#ifndef PELAB_APP_IDS_H
#define PELAB_APP_IDS_H

#include <stddef.h>

/* A list of token ids "1,2,3" (commas or spaces between them) given to --opt: *n ids into *out
 * (malloc'd; out NULL: only checked and counted), each in 0..vocab-1 (vocab <= 0: 0..16777215),
 * whose naming the vocabulary in messages (NULL: none). 0, or -1 with one line in err that names
 * --opt, the value and what is allowed; an empty list is refused. The one parser of --ids (the
 * attention and measure views, generate) and of tokenize --decode. */
int app_ids_parse(const char *opt, const char *v, int vocab, const char *whose, int **out, int *n,
                  char *err, size_t errlen);

#endif
