"""depecker2010, PhD thesis on TreeRank (M. Depecker, c. 2010): bipartite ranking with ranking trees, LeafRank,
pruning, bagging and ranking forests. Not implemented yet: the study is registered with no claims.

What will come here (digest: shared/studies/depecker2010.md, §7 "Headline claims"), once the ranking learners
(TreeRank, LeafRank, bagging and ranking forests, RankBoost, RankSVM, RankRLS) and the two-sample tests exist:

- the split step of TreeRank is cost-sensitive classification, with L_{C,p} = 4p(1 - p)(1 - AUC_C) (a unit test of
  the learner rather than a claim on runs);
- axis-parallel TreeRank near-optimal on Unif2d but saturating below AUC* on GaussCroix2d, where TRK_SVM reaches
  about AUC* (Figs 1.15d, 2.12); cross-validated cost-complexity pruning picks a near-best tree (Fig. 3.6);
- bagging reduces instability: ROC envelope area -50% (CART) / -40% (SVM), ranking instability down by an order of
  magnitude on the 20-D mixtures, AUC up (Table 4.2);
- on the 13 datasets (10-fold CV), SVM-based TreeRank beats CART-based single trees, resampling helps CART, and
  randomised CART forests match SVM-based bagging (Table A.1);
- global AUC of RF3_CART / RF1_SVM comparable to RankBoost, RankSVM and RankRLS, truncated AUC at 20/10/5% clearly
  better (Tables A.3, A.4; the convention for ties in the truncated AUC is open, see digest §8);
- the TreeRank + Wilcoxon two-sample test more powerful than MMD in all 8 Gaussian settings (Table 6.1).

The Renault "brio" application (§7 item 8) uses proprietary data and will not be reproduced. Its published tables
(4.2, 6.1, A.1-A.4) will go to experiments/depecker2010/published/, read by :meth:`Study.read_published`, or by a
reader of this module's own where a table is not in long form.
"""

from __future__ import annotations

from forestlab.studies import Study, register

STUDY = register(Study(
    key="depecker2010",
    title="TreeRank: bipartite ranking with ranking trees and ranking forests (PhD thesis); not implemented yet",
    claims={},
    combines={},
))
