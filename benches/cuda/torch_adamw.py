# torch.optim.AdamW on GPT-2 small's 148 parameter shapes (124,439,808 f32)
# on the GPU: one step, median of 30 after 5 warm-ups, synchronized; the
# anchor for pytree-optim's candle CUDA figure, same machine, same call.
import time, torch
V, C, D, L = 50257, 1024, 768, 12
shapes = [(V, D), (C, D)]
for _ in range(L):
    shapes += [(D,), (D,), (D, 3 * D), (3 * D,), (D, D), (D,), (D,), (D,), (D, 4 * D), (4 * D,), (4 * D, D), (D,)]
shapes += [(D,), (D,)]
n = sum(torch.Size(s).numel() for s in shapes)
print(f"torch {torch.__version__}: {len(shapes)} tensors, {n} parameters")
for mode in ["foreach", "fused", "for-loop"]:
    ps = [torch.nn.Parameter(torch.randn(s, device="cuda") * 0.02) for s in shapes]
    for p in ps:
        p.grad = torch.randn_like(p) * 1e-3
    kw = {"foreach": dict(foreach=True), "fused": dict(fused=True), "for-loop": dict(foreach=False)}[mode]
    opt = torch.optim.AdamW(ps, lr=1e-3, weight_decay=0.01, eps=1e-8, **kw)
    for _ in range(5):
        opt.step()
    torch.cuda.synchronize()
    ts = []
    for _ in range(30):
        t = time.perf_counter(); opt.step(); torch.cuda.synchronize(); ts.append((time.perf_counter() - t) * 1e3)
    ts.sort()
    print(f"speed torch AdamW {mode}: {ts[15]:.3f} ms (median of 30)")
