#include "engine/first.h"

int cph_first_class(size_t rows) {
  if (rows < CPH_FIRST_MIN_ROWS)
    return -1;
  int c = 0;
  while (c + 1 < CPH_FIRST_CLASSES && rows >= (size_t)CPH_FIRST_MIN_ROWS
                                                  << (c + 1))
    c++;
  return c;
}

void cph_first_count_long(cph_first_counts *c, size_t rows, int rescued) {
  const int k = cph_first_class(rows);
  if (k < 0)
    return;
  c->seen[k] += 1;
  c->rescued[k] += rescued != 0;
}

void cph_first_add(cph_first_counts *to, const cph_first_counts *from) {
  for (int k = 0; k < CPH_FIRST_CLASSES; k++) {
    to->seen[k] += from->seen[k];
    to->rescued[k] += from->rescued[k];
  }
}

void cph_first_learn(cph_first_counts *memory, const cph_first_counts *call) {
  cph_first_add(memory, call);
  for (int k = 0; k < CPH_FIRST_CLASSES; k++)
    while (memory->seen[k] > CPH_FIRST_MEMORY) {
      memory->seen[k] /= 2;
      memory->rescued[k] /= 2;
    }
}

size_t cph_first_rows(const cph_first_counts *memory) {
  size_t rows = 0;
  for (int k = CPH_FIRST_CLASSES - 1; k >= 0; k--) {
    if (memory->seen[k] < CPH_FIRST_MIN_SEEN)
      continue;
    if (memory->rescued[k] < CPH_FIRST_RATE * memory->seen[k])
      break;
    rows = (size_t)CPH_FIRST_MIN_ROWS << k;
  }
  return rows;
}
