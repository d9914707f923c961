"""embedding(sparse=True): the weight's gradient is a sparse COO tensor
holding one row per looked-up index (uncoalesced, as PyTorch's), so that an
optimizer that accepts sparse gradients updates only those rows."""
import ember
from ember.autograd import Function


class EmbeddingSparse(Function):
    @staticmethod
    def forward(ctx, weight, flat, padding_idx):
        ctx.save_for_backward(flat)
        ctx.weight_shape = weight.shape
        ctx.padding_idx = padding_idx
        return weight.index_select(0, flat)

    @staticmethod
    def backward(ctx, g):
        flat, = ctx.saved_tensors
        if ctx.padding_idx is not None:  # the padding row gets no gradient
            keep = flat != ctx.padding_idx
            flat, g = flat[keep], g[keep]
        grad = ember.sparse_coo_tensor(flat.unsqueeze(0), g.contiguous(), ctx.weight_shape,
                                       is_coalesced=False)
        return grad, None, None


def embedding_sparse(weight, flat, padding_idx):
    return EmbeddingSparse.apply(weight, flat, padding_idx)
