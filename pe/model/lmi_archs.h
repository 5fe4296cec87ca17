/* lmi_archs.h: the model architectures, in the order lmi_open probes them. Adding one is a file
 * defining `const lmi_arch lmi_arch_<name>` (see lmi.h: the ops table), one X(<name>) line here
 * and the file in pe/model/meson.build. The first is the fallback that explains a file no
 * architecture claims. */
#ifndef PELAB_MODEL_LMI_ARCHS_H
#define PELAB_MODEL_LMI_ARCHS_H

/* One X(<name>) per architecture (continue the macro with a backslash per line). */
#define LMI_ARCHS(X)                                                                               \
    X(tiny)    /* pelab's own transformer (tiny/lmi_tiny.c): .pelab checkpoints */                 \
    X(llama2c) /* llama2.c .bin (lmi_lm.c) */                                                      \
    X(hf)      /* Hugging Face folders: Llama, Mistral, Qwen2, GPT-2 (lmi_lm.c) */

/* struct, not the typedef: this list includes nothing (lmi.c includes it) */
#define LMI_ARCH_DECLARE(n) extern const struct lmi_arch lmi_arch_##n;
LMI_ARCHS(LMI_ARCH_DECLARE)
#undef LMI_ARCH_DECLARE

#endif
